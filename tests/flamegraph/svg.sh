#!/bin/sh
# -f svg: the flame graph of a real recording holds the same samples under
# each function as the folded output (exact with --minwidth 0, and with the
# default merging of narrow frames, and reversed), and works in a real
# browser: headless Chromium opens it, a hover shows the tooltip, a click
# zooms, Reset Zoom restores, a search highlights the matches and shows
# their share.  The screenshots stay in the build tree as
# tests/flamegraph/flame.png, flame-zoom.png and flame-search.png, next to
# the flame.svg they show.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/flamegraph/fg-lib.sh"

plan=12
tap_plan "$plan"
e2e_setup
fg_record

# 2. The SVGs: default, exact, reversed.
if [ -z "$problem" ]; then
  if "$EU_STACKTRACE" -i "$data" --inline -f svg -o "$tmp/default.svg" 2> "$tmp/svg.err" \
     && "$EU_STACKTRACE" -i "$data" --inline -f svg --minwidth 0 --title 'shlib, exact' \
          -o "$tmp/exact.svg" 2>> "$tmp/svg.err" \
     && "$EU_STACKTRACE" -i "$data" --inline -f svg --minwidth 0 --reverse --width 900 \
          -o "$tmp/reverse.svg" 2>> "$tmp/svg.err"; then
    tap_ok "eu-stacktrace -f svg writes the flame graphs: $(wc -c < "$tmp/default.svg") bytes by default"
  else
    problem="eu-stacktrace -f svg failed"
    tap_diag_file "$tmp/svg.err" 20
    tap_not_ok "eu-stacktrace -f svg writes the flame graphs: $problem"
  fi
else
  tap_not_ok "eu-stacktrace -f svg writes the flame graphs: not run ($problem)"
fi

# 3-5. The samples under each function, against folded.
fg_python 3 3 "svg totals" "$FG/check-svg.py" --folded "$tmp/folded" \
  --svg-exact "$tmp/exact.svg" --svg-default "$tmp/default.svg" \
  --svg-reverse "$tmp/reverse.svg"

# 6-11. In the browser.
if [ -z "$problem" ]; then
  p=$(tool_problem chromium "$CHROMIUM")
  [ -n "$p" ] && problem="$p (Debian package chromium)"
  mkdir -p "$ARTIFACTS" && cp "$tmp/default.svg" "$ARTIFACTS/flame.svg"
fi
fg_python 6 6 "svg in chromium" "$FG/browser.py" --svg "$tmp/default.svg" \
  --folded "$tmp/folded" --chromium "$(command -v "$CHROMIUM" || echo "$CHROMIUM")" \
  --shots "$ARTIFACTS" --log "$tmp/chromium.log" --zoom-frame work_sort --search '^work_'

# 12. The sanitizer build.
fg_asan "svg" svg "$tmp/default.svg"
fg_end
