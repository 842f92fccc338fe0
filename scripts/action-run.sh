#!/usr/bin/env bash
# action-run.sh is the GitHub Action's work (action.yml calls it): it gets
# vibe-test and the pinned claude CLI, runs vibe-test on the skill with the
# action's inputs, appends the Markdown summary to $GITHUB_STEP_SUMMARY,
# writes the step's outputs, and exits with vibe-test's exit code.
#
# The logic lives here rather than in action.yml so that it can be run, and
# tested, outside GitHub: app/action_test.go runs it with a fake
# GITHUB_STEP_SUMMARY, INPUT_* variables and VIBE_TEST_BIN.
#
# Inputs (environment; action.yml maps each `with:` input to one):
#   INPUT_SKILL            SKILL.md or its folder (required)
#   INPUT_CONVERSATIONS    --conversations
#   INPUT_CONCURRENCY      --concurrency
#   INPUT_MAX_BUDGET_USD   --max-budget-usd
#   INPUT_MODEL            --model
#   INPUT_ARGS             more arguments, split on white space and line breaks
#                          (no quoting; --out is refused: INPUT_OUT names it)
#   INPUT_OUT              the run folder (default: a new folder under $RUNNER_TEMP)
#   INPUT_VERSION          the vibe-test release: 1.2.3, v1.2.3 or latest
#   INPUT_CLAUDE_VERSION   the @anthropic-ai/claude-code version to install
#   INPUT_REPOSITORY       owner/name of the releases (default vibe-test/vibe-test)
#   INPUT_SETUP_JAIL       true (default): on Linux, when bubblewrap cannot
#                          start a jail, install it and allow user namespaces
#                          with sudo; false: leave the machine as it is
# Already installed tools (skip the downloads; the tests use both):
#   VIBE_TEST_BIN          a vibe-test binary
#   VIBE_TEST_CLAUDE       a claude CLI (vibe-test itself honours it too)
#
# Exit codes are vibe-test's (0 ok, 1 decay, 2 indeterminate, 3 tool error,
# 130 interrupted); a bad input or a failed download is 3, as vibe-test's
# own bad input is.
set -euo pipefail

fail() {
	echo "action-run: $*" >&2
	note "vibe-test did not run: $*"
	exit 3
}

# note adds a line to the step summary, so a run that never started says
# why on the summary page too.
note() {
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		printf '\n**vibe-test:** %s\n' "$(printf '%s' "$1" | sed 's/[][\\`*_{}()#+!|<>&$@~-]/\\&/g')" >>"$GITHUB_STEP_SUMMARY"
	fi
}

whole() { # whole NAME VALUE: a whole number, or the input is refused
	[[ "$2" =~ ^[0-9]+$ ]] || fail "input $1: \"$2\" is not a whole number"
}

[ -n "${INPUT_SKILL:-}" ] || fail "input skill: empty; give the path of a SKILL.md or of its folder"
[ -z "${INPUT_CONVERSATIONS:-}" ] || whole conversations "$INPUT_CONVERSATIONS"
[ -z "${INPUT_CONCURRENCY:-}" ] || whole concurrency "$INPUT_CONCURRENCY"
if [ -n "${INPUT_MAX_BUDGET_USD:-}" ] && ! [[ "$INPUT_MAX_BUDGET_USD" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
	fail "input max-budget-usd: \"$INPUT_MAX_BUDGET_USD\" is not an amount in dollars such as 10 or 2.50"
fi
case ${INPUT_SETUP_JAIL:-true} in
true | false) ;;
*) fail "input setup-jail: \"$INPUT_SETUP_JAIL\" is neither true nor false" ;;
esac
# The run folder is named in $GITHUB_OUTPUT, one line per output: a line
# break in it would write outputs of its own.
[[ "${INPUT_OUT:-}" != *$'\n'* ]] || fail "input out: a line break in the folder's name"
# Every line of args (a `args: |` block), split on white space. `read -a`
# alone kept the first line and dropped the rest, a --max-budget-usd
# among them, without a word.
extra=()
if [ -n "${INPUT_ARGS:-}" ]; then
	read -r -d '' -a extra <<<"$INPUT_ARGS" || true
fi
# ${extra[@]+...}: an empty array under set -u is an error in the bash
# 3.2 of macOS runners.
for a in ${extra[@]+"${extra[@]}"}; do
	case $a in
	--out | --out=* | -out | -out=*) # urfave/cli reads -out as --out
		# vibe-test takes the last --out: the run went there while the
		# step's run-dir output, and so the artifact upload, named the
		# empty folder the script made.
		fail "input args: $a: give the run folder as the out input (the step's run-dir output and the artifact upload read it)"
		;;
	esac
done

tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
mkdir -p "$tmp"

# install_vibe_test downloads the release archive for this machine, checks
# it against the release's checksums file and unpacks it.
install_vibe_test() {
	local repo=${INPUT_REPOSITORY:-vibe-test/vibe-test} version=${INPUT_VERSION:-latest} os arch
	case "$(uname -s)" in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) fail "no vibe-test release for $(uname -s); releases are built for Linux and macOS" ;;
	esac
	case "$(uname -m)" in
	x86_64 | amd64) arch=amd64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) fail "no vibe-test release for the $(uname -m) processor; releases are built for amd64 and arm64" ;;
	esac
	if [ "$version" = latest ]; then
		# The latest release's page redirects to its tag; no API token needed.
		local url
		url=$(curl -fsSLI -o /dev/null -w '%{url_effective}' "https://github.com/$repo/releases/latest") ||
			fail "input version: cannot find the latest release of $repo"
		version=${url##*/tag/}
		[ "$version" != "$url" ] || fail "input version: $repo has no release yet; give a version"
	fi
	version=${version#v}
	[[ "$version" =~ ^[0-9A-Za-z.+-]+$ ]] || fail "input version: \"$version\" is not a version such as 1.2.3"
	local base="https://github.com/$repo/releases/download/v$version"
	local archive="vibe-test_${version}_${os}_${arch}.tar.gz"
	local dir="$tmp/vibe-test-$version"
	mkdir -p "$dir"
	curl -fsSL -o "$dir/$archive" "$base/$archive" || fail "cannot download $base/$archive"
	curl -fsSL -o "$dir/checksums.txt" "$base/vibe-test_${version}_checksums.txt" ||
		fail "cannot download $base/vibe-test_${version}_checksums.txt to check the archive"
	local want got
	want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$dir/checksums.txt")
	[ -n "$want" ] || fail "the release's checksums file does not list $archive"
	got=$( (sha256sum "$dir/$archive" 2>/dev/null || shasum -a 256 "$dir/$archive") | awk '{print $1}')
	[ "$got" = "$want" ] || fail "$archive: sha256 $got, but the release's checksums file says $want"
	tar -xzf "$dir/$archive" -C "$dir" || fail "cannot unpack $archive"
	[ -x "$dir/vibe-test" ] || fail "$archive holds no vibe-test binary at its top"
	VIBE_TEST_BIN="$dir/vibe-test"
}

# install_claude puts the pinned CLI into a folder of its own (no global
# install, no sudo) and points vibe-test at it.
install_claude() {
	local version=${INPUT_CLAUDE_VERSION:-}
	[ -n "$version" ] || fail "input claude-version: empty; give the @anthropic-ai/claude-code version to install"
	command -v npm >/dev/null || fail "npm is not installed; the claude CLI is installed with npm (actions/setup-node)"
	local dir="$tmp/claude-code-$version"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >&2 ||
		fail "npm could not install @anthropic-ai/claude-code@$version"
	export VIBE_TEST_CLAUDE="$dir/node_modules/.bin/claude"
}

# setup_jail makes the bubblewrap jail possible on a hosted runner: the
# package, and the user namespaces Ubuntu 24.04 restricts by default.
setup_jail() {
	[ "$(uname -s)" = Linux ] || return 0
	if command -v bwrap >/dev/null && bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid true 2>/dev/null; then
		return 0
	fi
	if ! sudo -n true 2>/dev/null; then
		echo "action-run: bubblewrap cannot start a jail here and sudo is not available; vibe-test will run without one (NO JAIL)" >&2
		return 0
	fi
	command -v bwrap >/dev/null || sudo -n apt-get install -y -qq bubblewrap >&2 || true
	sudo -n sysctl -q kernel.apparmor_restrict_unprivileged_userns=0 >&2 2>/dev/null || true
	sudo -n sysctl -q kernel.unprivileged_userns_clone=1 >&2 2>/dev/null || true
}

if [ -z "${VIBE_TEST_BIN:-}" ]; then
	install_vibe_test
fi
[ -x "$VIBE_TEST_BIN" ] || fail "VIBE_TEST_BIN $VIBE_TEST_BIN is not an executable file"
if [ -z "${VIBE_TEST_CLAUDE:-}" ]; then
	install_claude
fi
if [ "${INPUT_SETUP_JAIL:-true}" != false ]; then
	setup_jail
fi

out=${INPUT_OUT:-}
if [ -z "$out" ]; then
	mkdir -p "$tmp/vibe-runs"
	out=$(mktemp -d "$tmp/vibe-runs/run-XXXXXX") # empty: vibe-test claims it
fi
markdown=$(mktemp "$tmp/summary-XXXXXX") && rm -f "$markdown" # vibe-test writes it, or nothing

args=("$INPUT_SKILL" --out "$out" --markdown "$markdown")
[ -z "${INPUT_CONVERSATIONS:-}" ] || args+=(--conversations "$INPUT_CONVERSATIONS")
[ -z "${INPUT_CONCURRENCY:-}" ] || args+=(--concurrency "$INPUT_CONCURRENCY")
[ -z "${INPUT_MAX_BUDGET_USD:-}" ] || args+=(--max-budget-usd "$INPUT_MAX_BUDGET_USD")
[ -z "${INPUT_MODEL:-}" ] || args+=(--model "$INPUT_MODEL")
args+=(${extra[@]+"${extra[@]}"})

echo "action-run: $VIBE_TEST_BIN ${args[*]}" >&2
set +e
"$VIBE_TEST_BIN" "${args[@]}"
code=$?
set -e

if [ -s "$markdown" ]; then
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		cat "$markdown" >>"$GITHUB_STEP_SUMMARY"
	fi
else
	note "vibe-test exited $code before it wrote a summary; the step's log says why."
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	{
		echo "exit-code=$code"
		echo "run-dir=$out"
		[ ! -s "$markdown" ] || echo "markdown=$markdown"
	} >>"$GITHUB_OUTPUT"
fi
exit "$code"
