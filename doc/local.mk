# The manual page.  It is written in man(7) macros by hand; check it with
#   groff -man -Tutf8 -ww doc/eu-stacktrace.1 >/dev/null
dist_man1_MANS += doc/eu-stacktrace.1
