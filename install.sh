#!/bin/sh
# install.sh — install the `priors` keeper and its Agent Skills for the current user.
#
#   sh install.sh              install (or update) the command and the skills
#   sh install.sh --dry-run    say what would be done; change nothing
#   sh install.sh --uninstall  remove only what this script installed
#   sh install.sh --link       link the skills to this checkout instead of copying
#
# Safe to run again. It never overwrites or removes a file or folder it did
# not install: everything it installs carries a `.installed-by-priors` mark
# (a launcher carries the mark as a comment line; a linked skill points into
# this checkout).
#
# Environment: HOME (where to install), PRIORS_PYTHON (the Python to use,
# default python3), PRIORS_INSTALL_SKIP_PACKAGE=1 (skills only; skip the
# command), PRIORS_INSTALL_NO_PIPX=1 (use a private virtual environment even
# when pipx is present).

set -u

MARK=.installed-by-priors
LAUNCHER_MARK="# installed-by-priors"
SKILLS="priors with-priors"

DRY=0
MODE=install
LINK=0

usage() {
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

for arg in "$@"; do
    case "$arg" in
        --dry-run|-n) DRY=1 ;;
        --uninstall) MODE=uninstall ;;
        --link) LINK=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

if [ -z "${HOME:-}" ]; then
    echo "install.sh: HOME is not set; cannot tell where to install." >&2
    exit 2
fi

REPO=$(cd "$(dirname "$0")" && pwd -P)
PY=${PRIORS_PYTHON:-python3}
DATA="$HOME/.local/share/priors"
VENV="$DATA/venv"
BIN="$HOME/.local/bin"
LAUNCHER="$BIN/priors"

say() { printf '%s\n' "$*"; }

# run CMD ...: run a command, or only show it under --dry-run.
run() {
    if [ "$DRY" -eq 1 ]; then
        say "  would run: $*"
        return 0
    fi
    "$@"
}

# tilde PATH: show a path with $HOME written as ~.
tilde() {
    case "$1" in
        "$HOME"/*) printf '~/%s' "${1#"$HOME"/}" ;;
        *) printf '%s' "$1" ;;
    esac
}

check_python() {
    if ! command -v "$PY" >/dev/null 2>&1; then
        say "priors needs Python 3.9 or newer, and '$PY' was not found."
        say "Install Python 3.9+ (or set PRIORS_PYTHON=/path/to/python3) and run this again."
        exit 1
    fi
    PYABS=$(command -v "$PY")
    PYVER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || PYVER=unknown
    if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' >/dev/null 2>&1; then
        say "priors needs Python 3.9 or newer; '$PY' is Python $PYVER."
        say "Install Python 3.9+ (or set PRIORS_PYTHON=/path/to/python3.9-or-newer) and run this again."
        exit 1
    fi
}

# ours_launcher FILE: true when FILE is a launcher this script wrote.
ours_launcher() {
    [ -f "$1" ] && grep -qx "$LAUNCHER_MARK" "$1" 2>/dev/null
}

# ours_skill DIR NAME: true when DIR is a skill folder this script installed.
ours_skill() {
    if [ -L "$1" ]; then
        target=$(readlink "$1")
        case "$target" in
            */skills/"$2") [ -f "$target/../../install.sh" ] && [ -f "$target/SKILL.md" ] ;;
            *) return 1 ;;
        esac
        return $?
    fi
    [ -d "$1" ] && [ -f "$1/$MARK" ]
}

has_package_source() {
    [ -f "$REPO/pyproject.toml" ] || [ -f "$REPO/setup.py" ]
}

write_launcher() {
    # write_launcher BODY-LINE: a two-line sh launcher at $LAUNCHER.
    if [ -e "$LAUNCHER" ] || [ -L "$LAUNCHER" ]; then
        if ! ours_launcher "$LAUNCHER"; then
            say "  left alone: $(tilde "$LAUNCHER") exists and was not installed by priors."
            say "  The keeper is still available as: $1"
            return 0
        fi
    fi
    if [ "$DRY" -eq 1 ]; then
        say "  would write launcher $(tilde "$LAUNCHER")"
        return 0
    fi
    mkdir -p "$BIN" || return 1
    tmp="$LAUNCHER.tmp.$$"
    {
        printf '#!/bin/sh\n'
        printf '%s\n' "$LAUNCHER_MARK"
        printf 'exec %s "$@"\n' "$1"
    } >"$tmp" && chmod 755 "$tmp" && mv -f "$tmp" "$LAUNCHER"
    say "  wrote launcher $(tilde "$LAUNCHER")"
}

install_package() {
    say "The priors command:"
    if [ "${PRIORS_INSTALL_SKIP_PACKAGE:-}" = 1 ]; then
        say "  skipped (PRIORS_INSTALL_SKIP_PACKAGE=1)"
        return 0
    fi
    if ! has_package_source; then
        # A checkout without packaging metadata: run the package from the checkout.
        say "  $REPO has no pyproject.toml; the launcher will run the keeper from this checkout."
        write_launcher "env PYTHONPATH='$REPO'\${PYTHONPATH:+:\$PYTHONPATH} '$PYABS' -m priors"
        return $?
    fi
    if [ "${PRIORS_INSTALL_NO_PIPX:-}" != 1 ] && command -v pipx >/dev/null 2>&1 && ! ours_launcher "$LAUNCHER"; then
        if [ ! -f "$DATA/pipx" ] && pipx list --short 2>/dev/null | grep -q '^priors '; then
            say "  left alone: pipx already has a 'priors' that this script did not install."
            return 0
        fi
        if [ "$DRY" -eq 1 ]; then
            say "  would install with pipx: pipx install --force --python $PYABS $REPO"
            return 0
        fi
        say "  installing with pipx from $REPO"
        if pipx install --force --python "$PYABS" "$REPO"; then
            mkdir -p "$DATA" && : >"$DATA/$MARK" && : >"$DATA/pipx"
            say "  installed with pipx"
            return 0
        fi
        say "  pipx failed; falling back to a private virtual environment"
    fi
    if [ -d "$VENV" ] && [ ! -f "$DATA/$MARK" ]; then
        say "  left alone: $(tilde "$VENV") exists and was not installed by priors."
        return 1
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        say "  creating virtual environment $(tilde "$VENV")"
        run mkdir -p "$DATA" || return 1
        [ "$DRY" -eq 1 ] || : >"$DATA/$MARK"
        run "$PYABS" -m venv "$VENV" || {
            say "  could not create a virtual environment (on Debian/Ubuntu: apt-get install python3-venv)."
            return 1
        }
    fi
    say "  installing the package from $REPO"
    if run "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$REPO" \
        || run "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps --no-build-isolation "$REPO"; then
        write_launcher "'$VENV/bin/python' -m priors"
        return $?
    fi
    say "  pip could not build the package (offline?); the launcher will run the keeper from this checkout."
    write_launcher "env PYTHONPATH='$REPO'\${PYTHONPATH:+:\$PYTHONPATH} '$VENV/bin/python' -m priors"
}

uninstall_package() {
    say "The priors command:"
    if ! [ -f "$DATA/$MARK" ] && ! ours_launcher "$LAUNCHER"; then
        say "  nothing of ours to remove"
    fi
    if [ -f "$DATA/pipx" ] && command -v pipx >/dev/null 2>&1; then
        if [ "$DRY" -eq 1 ]; then
            say "  would run: pipx uninstall priors"
        elif pipx uninstall priors >/dev/null 2>&1; then
            say "  removed the pipx install"
        fi
    fi
    if ours_launcher "$LAUNCHER"; then
        if [ "$DRY" -eq 1 ]; then say "  would remove $(tilde "$LAUNCHER")"; else rm -f "$LAUNCHER" && say "  removed $(tilde "$LAUNCHER")"; fi
    elif [ -e "$LAUNCHER" ] || [ -L "$LAUNCHER" ]; then
        say "  left alone: $(tilde "$LAUNCHER") was not installed by priors"
    fi
    if [ -f "$DATA/$MARK" ]; then
        if [ "$DRY" -eq 1 ]; then
            say "  would remove $(tilde "$DATA")"
        else
            rm -rf "$VENV" && rm -f "$DATA/pipx" "$DATA/$MARK" && say "  removed $(tilde "$DATA")"
            rmdir "$DATA" 2>/dev/null || true
        fi
    elif [ -d "$DATA" ]; then
        say "  left alone: $(tilde "$DATA") was not installed by priors"
    fi
}

# Harnesses: "label|config dir|skills dir". Detected when the config dir exists.
harnesses() {
    printf '%s\n' \
        "Claude Code|$HOME/.claude|$HOME/.claude/skills" \
        "Codex|$HOME/.codex|$HOME/.codex/skills" \
        "Agent Skills (cross-client)|$HOME/.agents|$HOME/.agents/skills" \
        "Pi|$HOME/.pi/agent|$HOME/.pi/agent/skills" \
        "OpenClaw|$HOME/.openclaw|$HOME/.openclaw/skills"
}

install_skill() {
    # install_skill SKILLS-DIR NAME
    dest="$1/$2"
    src="$REPO/skills/$2"
    if [ -e "$dest" ] || [ -L "$dest" ]; then
        if ! ours_skill "$dest" "$2"; then
            say "  left alone: $(tilde "$dest") exists and was not installed by priors"
            return 0
        fi
        if [ "$DRY" -eq 1 ]; then
            say "  would update $(tilde "$dest")"
            return 0
        fi
        if [ -L "$dest" ]; then rm -f "$dest"; else rm -rf "$dest"; fi
        verb=updated
    else
        if [ "$DRY" -eq 1 ]; then
            say "  would install $(tilde "$dest")"
            return 0
        fi
        verb=installed
    fi
    mkdir -p "$1" || return 1
    if [ "$LINK" -eq 1 ]; then
        ln -s "$src" "$dest" || return 1
        say "  $verb $(tilde "$dest") (linked to this checkout)"
    else
        cp -R "$src" "$dest" || return 1
        : >"$dest/$MARK"
        say "  $verb $(tilde "$dest")"
    fi
}

uninstall_skill() {
    dest="$1/$2"
    if ours_skill "$dest" "$2"; then
        if [ "$DRY" -eq 1 ]; then
            say "  would remove $(tilde "$dest")"
            return 0
        fi
        if [ -L "$dest" ]; then rm -f "$dest"; else rm -rf "$dest"; fi
        say "  removed $(tilde "$dest")"
    elif [ -e "$dest" ] || [ -L "$dest" ]; then
        say "  left alone: $(tilde "$dest") was not installed by priors"
    fi
}

skills_step() {
    found=0
    missing=""
    nl='
'
    say "Agent skills:"
    oldifs=$IFS
    set -f
    IFS=$nl
    for line in $(harnesses); do
        IFS=$oldifs
        label=${line%%|*}
        rest=${line#*|}
        conf=${rest%%|*}
        dir=${rest#*|}
        if [ -d "$conf" ]; then
            found=1
            say " $label ($(tilde "$dir")):"
            for s in $SKILLS; do
                if [ "$MODE" = install ]; then install_skill "$dir" "$s"; else uninstall_skill "$dir" "$s"; fi
            done
        else
            missing="$missing$label ($(tilde "$conf") not found)$nl"
        fi
        IFS=$nl
    done
    IFS=$oldifs
    set +f
    [ "$MODE" = install ] || return 0
    if [ -n "$missing" ]; then
        say ""
        say "Not found, so nothing was installed for:"
        printf '%s' "$missing" | sed 's/^/  /'
    fi
    if [ -d "$HOME/.kimi" ] && [ ! -d "$HOME/.claude" ] && [ ! -d "$HOME/.codex" ]; then
        say ""
        say "Kimi Code CLI: start it with the skills from this checkout:"
        say "  kimi --skills-dir $REPO/skills"
    fi
    say ""
    if [ "$found" -eq 0 ]; then
        say "No agent harness was found. To use priors anyway:"
    else
        say "Where no skills folder exists:"
    fi
    say "  - Codex or any AGENTS.md reader: paste $REPO/adapters/AGENTS-snippet.md into the repository's AGENTS.md"
    say "  - any agent with a shell: add $REPO/adapters/system-prompt.md to its system prompt"
    say "  - an agent without a shell: advisory only — give it .priors/PRIORS.md as context"
}

path_hint() {
    [ "$MODE" = install ] || return 0
    [ "${PRIORS_INSTALL_SKIP_PACKAGE:-}" = 1 ] && return 0
    ours_launcher "$LAUNCHER" || return 0
    case ":${PATH:-}:" in
        *":$BIN:"*) ;;
        *)
            say ""
            say "$(tilde "$BIN") is not on your PATH. Add this line to your shell profile:"
            say "  export PATH=\"\$HOME/.local/bin:\$PATH\""
            ;;
    esac
}

[ "$DRY" -eq 1 ] && say "Dry run: nothing will be changed."
status=0
if [ "$MODE" = install ]; then
    check_python
    install_package || status=1
    skills_step || status=1
    path_hint
    say ""
    if [ "$status" -eq 0 ]; then
        say "Done. Try it in a scratch folder: priors demo"
    else
        say "Finished with problems (see above)."
    fi
else
    PYABS=$(command -v "$PY" 2>/dev/null || printf '%s' "$PY")
    uninstall_package || status=1
    skills_step || status=1
    say ""
    say "Done. Ledgers (.priors/ folders in your repositories) were not touched."
fi
exit "$status"
