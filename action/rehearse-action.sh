#!/usr/bin/env bash
# The steps of action.yml (the repository's GitHub Action). Every input arrives in an INPUT_*
# variable and reaches rehearse as one argument each, never as shell text. A bad input is exit 2
# naming the input, before anything runs.
#   rehearse-action.sh rehearse   run diff, sweep and test as the inputs ask; write the comment
#   rehearse-action.sh comment    post the comment with gh pr comment
#   rehearse-action.sh gate       exit with the worst status of the rehearse step
set -uo pipefail

refuse() { echo "rehearse action: $1: $2" >&2; exit 2; }
output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; fi; }

# A fence longer than any run of backticks in the file, so no output closes its block early.
fenced() {
  local file=$1 longest fence
  longest=$(grep -o '`*' "$file" | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
  fence='```'
  while [ "${#fence}" -le "$longest" ]; do fence="$fence\`"; done
  printf '%s text\n' "$fence"
  cat "$file"
  printf '\n%s\n' "$fence"
}

binary() {
  if [ -n "${INPUT_BINARY:-}" ]; then
    [ -f "$INPUT_BINARY" ] && [ -x "$INPUT_BINARY" ] || refuse binary "'$INPUT_BINARY' is not an executable file; allowed the path of a rehearse binary"
    printf '%s' "$INPUT_BINARY"
  elif [ -n "${INPUT_BINARY_URL:-}" ]; then
    case "$INPUT_BINARY_URL" in
      https://*) ;;
      *) refuse binary-url "'$INPUT_BINARY_URL' is not an https:// URL; allowed https only" ;;
    esac
    local target="${RUNNER_TEMP:-$(mktemp -d)}/rehearse-bin"
    curl -fsSL --proto '=https' -o "$target" -- "$INPUT_BINARY_URL" || refuse binary-url "could not download '$INPUT_BINARY_URL'"
    chmod +x "$target"
    printf '%s' "$target"
  else
    command -v rehearse || refuse binary "no rehearse on PATH; give binary or binary-url"
  fi
}

rehearse_step() {
  local bin work status=0 code
  # Everything checked before anything runs.
  case "${INPUT_COMMENT:-true}" in true | false) ;; *) refuse comment "'$INPUT_COMMENT'; allowed true or false" ;; esac
  if [ -z "${INPUT_DIFF_BEFORE:-}" ]; then
    for name in DIFF_AFTER DIFF_TEMPLATE DIFF_SCENARIO; do
      local value="INPUT_$name"
      [ -z "${!value:-}" ] || refuse "$(echo "$name" | tr 'A-Z_' 'a-z-')" "given without diff-before"
    done
  fi
  if [ -z "${INPUT_DIFF_BEFORE:-}${INPUT_SWEEP_SCENARIO:-}${INPUT_TEST_PATHS:-}" ]; then
    refuse diff-before "nothing to rehearse; give diff-before, sweep-scenario or test-paths"
  fi
  if [ -n "${INPUT_TEST_PATHS:-}" ] && [ -z "${INPUT_JUNIT:-}" ]; then refuse junit "empty; allowed a file path for the JUnit XML"; fi
  local requires=()
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && requires+=(--require "$line")
  done <<< "${INPUT_REQUIRE:-}"
  local common=()
  [ -z "${INPUT_DEADLINE:-}" ] || common+=(--deadline "$INPUT_DEADLINE")
  [ -z "${INPUT_SEEDS:-}" ] || common+=(--seeds "$INPUT_SEEDS")
  bin=$(binary) || exit 2
  work=$(mktemp -d "${RUNNER_TEMP:-/tmp}/rehearse-action.XXXXXX")
  local comment="$work/comment.md"
  printf '## rehearse\n' > "$comment"

  if [ -n "${INPUT_DIFF_BEFORE:-}" ]; then
    # Options first, then -- and the documents: a file named like an option stays a file.
    local args=() documents=("$INPUT_DIFF_BEFORE")
    [ -z "${INPUT_DIFF_AFTER:-}" ] || documents+=("$INPUT_DIFF_AFTER")
    [ -z "${INPUT_DIFF_TEMPLATE:-}" ] || args+=(--template "$INPUT_DIFF_TEMPLATE")
    [ -z "${INPUT_DIFF_SCENARIO:-}" ] || args+=(--scenario "$INPUT_DIFF_SCENARIO")
    "$bin" diff "${args[@]}" "${common[@]}" "${requires[@]}" -- "${documents[@]}" > "$work/diff.md" 2> "$work/diff.err"
    code=$?
    printf '\n### diff (exit %s)\n\n' "$code" >> "$comment"
    cat "$work/diff.md" >> "$comment"
    if [ -s "$work/diff.err" ]; then fenced "$work/diff.err" >> "$comment"; fi
    [ "$code" -le "$status" ] || status=$code
  fi
  if [ -n "${INPUT_SWEEP_SCENARIO:-}" ]; then
    "$bin" sweep "${common[@]}" "${requires[@]}" -- "$INPUT_SWEEP_SCENARIO" > "$work/sweep.txt" 2>&1
    code=$?
    printf '\n### sweep (exit %s)\n\n' "$code" >> "$comment"
    fenced "$work/sweep.txt" >> "$comment"
    [ "$code" -le "$status" ] || status=$code
  fi
  if [ -n "${INPUT_TEST_PATHS:-}" ]; then
    local paths=()
    read -r -a paths <<< "$INPUT_TEST_PATHS"
    "$bin" test --junit "$INPUT_JUNIT" "${requires[@]}" -- "${paths[@]}" > "$work/test.txt" 2>&1
    code=$?
    printf '\n### test (exit %s)\n\n' "$code" >> "$comment"
    fenced "$work/test.txt" >> "$comment"
    [ "$code" -le "$status" ] || status=$code
  fi
  [ "$status" -le 2 ] || status=2
  output status "$status"
  output comment-file "$comment"
  echo "rehearse action: status $status; comment in $comment"
}

comment_step() {
  case "${INPUT_PULL_REQUEST:-}" in
    '' | *[!0-9]*) refuse pull-request "'${INPUT_PULL_REQUEST:-}' is not a pull request number; allowed digits (set comment: false outside a pull request)" ;;
  esac
  [ -f "${COMMENT_FILE:-}" ] || refuse comment-file "'${COMMENT_FILE:-}' does not exist"
  gh pr comment "$INPUT_PULL_REQUEST" --body-file "$COMMENT_FILE"
}

gate_step() {
  case "${STATUS:-}" in
    0 | 1 | 2) exit "$STATUS" ;;
    *) refuse status "the rehearse step gave no status ('${STATUS:-}'); it stopped before rehearse ran" ;;
  esac
}

case "${1:-}" in
  rehearse) rehearse_step ;;
  comment) comment_step ;;
  gate) gate_step ;;
  *) refuse step "'${1:-}'; allowed rehearse, comment or gate" ;;
esac
