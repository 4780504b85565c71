/* Inside -f svg: the picture's style sheet and script
 * (sink-svg-script.c), which sink-svg.c writes into every picture.  */
#pragma once

extern const char st_svg_style[];
extern const char st_svg_script[];
