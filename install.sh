#!/bin/sh
# install.sh — install the `priors` keeper and its Agent Skills for the current user.
#
#   ./install.sh              install (or update) the command, the skills and the MCP server
#   ./install.sh --dry-run    say what would be done; change nothing
#   ./install.sh --uninstall  remove only what this script installed
#   ./install.sh --link       link the skills to this checkout instead of copying
#   ./install.sh --hooks      also add the lesson hooks to ~/.claude/settings.json
#                             (for Claude Code without the plugin; --uninstall removes them)
#
# Safe to run again: a re-run from an unchanged checkout skips pip. It never
# overwrites or removes a file or folder it did not install: everything it
# installs carries a `.installed-by-priors` mark (a launcher carries the mark
# as a comment line; a linked skill points into this checkout), and the
# folders it had to create are listed in ~/.local/share/priors/created-dirs,
# so --uninstall removes them again when they are empty. The MCP server
# (`priors mcp`) is registered with Claude Code (`claude mcp add`) and Codex
# (a marked block in ~/.codex/config.toml) when they are found and nothing
# named priors is there yet; otherwise the exact snippet is printed.
#
# Environment: HOME (where to install), PRIORS_PYTHON (the Python to use,
# default python3), PRIORS_INSTALL_SKIP_PACKAGE=1 (skills only; skip the
# command), PRIORS_INSTALL_NO_PIPX=1 (use a private virtual environment even
# when pipx is present), PRIORS_INSTALL_NO_MCP=1 (register no MCP server;
# print the snippets), PRIORS_CLAUDE (the claude command, default claude),
# PRIORS_PI (the pi command, default pi).

set -u

MARK=.installed-by-priors
LAUNCHER_MARK="# installed-by-priors"
SKILLS="priors with-priors"

DRY=0
MODE=install
LINK=0
HOOKS=0

usage() {
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
}

for arg in "$@"; do
    case "$arg" in
        --dry-run|-n) DRY=1 ;;
        --uninstall) MODE=uninstall ;;
        --link) LINK=1 ;;
        --hooks) HOOKS=1 ;;
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
DIST=priors-keeper
DATA="$HOME/.local/share/priors"
VENV="$DATA/venv"
STAMP="$DATA/installed-from"
CREATED="$DATA/created-dirs"
BIN="$HOME/.local/bin"
LAUNCHER="$BIN/priors"
AGENTS_SKILLS="$HOME/.agents/skills"
HOOK_SCRIPT="$DATA/hooks/lessons_hook.py"
CLAUDE_SETTINGS="$HOME/.claude/settings.json"
PI_EXTENSION="$HOME/.pi/agent/extensions/priors"
CLAUDE=${PRIORS_CLAUDE:-claude}
CODEX_CONF="$HOME/.codex/config.toml"
MCP_BEGIN="# >>> priors MCP server (installed-by-priors; ./install.sh --uninstall removes this block) >>>"
MCP_END="# --- end of the priors MCP server block ---"
nl='
'

say() { printf '%s\n' "$*"; }

# would A B: A under --dry-run, B otherwise (for sentences that change mood).
would() {
    if [ "$DRY" -eq 1 ]; then printf '%s' "$1"; else printf '%s' "$2"; fi
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

# --- folders this script creates --------------------------------------------

# missing_dirs DIR: the folders `mkdir -p DIR` would create, outermost first, one a line.
missing_dirs() {
    mdr_d=$1
    mdr_out=""
    while [ ! -e "$mdr_d" ] && [ ! -L "$mdr_d" ]; do
        mdr_out="$mdr_d$nl$mdr_out"
        mdr_parent=$(dirname "$mdr_d")
        [ "$mdr_parent" = "$mdr_d" ] && break
        mdr_d=$mdr_parent
    done
    printf '%s' "$mdr_out"
}

# note_created LIST: add each folder of LIST (one a line) to $CREATED, once.
note_created() {
    printf '%s\n' "$1" | while IFS= read -r nc_d; do
        [ -n "$nc_d" ] || continue
        grep -qxF "$nc_d" "$CREATED" 2>/dev/null || printf '%s\n' "$nc_d" >>"$CREATED"
    done
}

# own_data: make sure $DATA exists and carries our mark; false when it belongs to someone else.
own_data() {
    if [ -d "$DATA" ]; then
        [ -f "$DATA/$MARK" ]
        return $?
    fi
    od_new=$(missing_dirs "$DATA")
    mkdir -p "$DATA" && : >"$DATA/$MARK" || return 1
    note_created "$od_new"
}

# make_dir DIR: mkdir -p DIR, remembering every folder it had to create.
make_dir() {
    [ -d "$1" ] && return 0
    mk_new=$(missing_dirs "$1")
    mkdir -p "$1" || return 1
    if own_data; then note_created "$mk_new"; fi
    return 0
}

# forget_created: after an uninstall, remove $DATA when nothing but our own files is
# left in it, then the folders this script created, deepest first, when they are empty.
forget_created() {
    [ -f "$DATA/$MARK" ] || return 0
    say "What install.sh made for its own use:"
    fc_list=""
    # deepest first: a folder's path is longer than its parent's
    [ -f "$CREATED" ] && fc_list=$(awk '{ print length($0) "\t" $0 }' "$CREATED" | sort -rn | cut -f2-)
    if [ "$DRY" -eq 1 ]; then
        say "  would remove $(tilde "$DATA") (its records)"
        printf '%s\n' "$fc_list" | while IFS= read -r fc_d; do
            [ -n "$fc_d" ] && [ "$fc_d" != "$DATA" ] && [ -d "$fc_d" ] || continue
            say "  would remove $(tilde "$fc_d") if nothing else is in it (install.sh created it)"
        done
        return 0
    fi
    rm -f "$CREATED" "$STAMP" "$DATA/pipx" "$DATA/mcp-claude" "$DATA/mcp-codex-created" "$DATA/claude-settings-created" "$DATA/$MARK"
    if rmdir "$DATA" 2>/dev/null; then
        say "  removed $(tilde "$DATA") (its records)"
    else
        say "  left alone: $(tilde "$DATA") holds files priors did not put there"
    fi
    printf '%s\n' "$fc_list" | while IFS= read -r fc_d; do
        [ -n "$fc_d" ] && [ "$fc_d" != "$DATA" ] || continue
        case "$fc_d" in "$HOME"/*) ;; *) continue ;; esac
        [ -d "$fc_d" ] && [ ! -L "$fc_d" ] || continue
        if rmdir "$fc_d" 2>/dev/null; then
            say "  removed the empty folder $(tilde "$fc_d") (install.sh created it)"
        else
            say "  left alone: $(tilde "$fc_d") (install.sh created it, but it holds other things now)"
        fi
    done
}

# --- the command -------------------------------------------------------------

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

# source_version: __version__ from the checkout's package.
source_version() {
    sed -n 's/^__version__ *= *["'\'']\([^"'\'']*\)["'\''].*/\1/p' "$REPO/priors/__init__.py" 2>/dev/null | head -n 1
}

# source_stamp HOW: one line naming what would be installed — distribution, version,
# how, a fingerprint of the package sources and packaging metadata, and the checkout.
source_stamp() {
    ss_fp=$("$PYABS" -c '
import hashlib, os, sys
root = sys.argv[1]
h = hashlib.sha256()
names = [n for n in ("pyproject.toml", "setup.py", "setup.cfg") if os.path.isfile(os.path.join(root, n))]
for d, dirs, files in os.walk(os.path.join(root, "priors")):
    dirs[:] = sorted(x for x in dirs if x != "__pycache__")
    names += [os.path.relpath(os.path.join(d, f), root) for f in sorted(files) if f.endswith(".py")]
for n in names:
    with open(os.path.join(root, n), "rb") as fh:
        h.update(n.encode() + b"\0" + fh.read() + b"\0")
print(h.hexdigest()[:16])
' "$REPO" 2>/dev/null) || ss_fp=unknown
    printf '%s %s %s %s %s' "$DIST" "${VERSION:-unknown}" "$1" "$ss_fp" "$REPO"
}

# up_to_date HOW: the last install, done the same way, came from these very sources.
up_to_date() {
    [ -f "$DATA/$MARK" ] && [ -f "$STAMP" ] || return 1
    [ "$(cat "$STAMP" 2>/dev/null)" = "$(source_stamp "$1")" ] || return 1
    case "$1" in
        pipx) [ -f "$DATA/pipx" ] ;;
        venv) ours_launcher "$LAUNCHER" && [ -x "$VENV/bin/python" ] \
              && (cd / && "$VENV/bin/python" -c 'import priors') >/dev/null 2>&1 ;;
        *) return 1 ;;
    esac
}

write_stamp() {
    own_data && source_stamp "$1" >"$STAMP" && printf '\n' >>"$STAMP"
}

skipped_pip() {
    if [ "$DRY" -eq 1 ]; then
        say "  $DIST $VERSION from this checkout is already installed and its sources are unchanged; pip would be skipped"
    else
        say "  $DIST $VERSION from this checkout is already installed and its sources are unchanged; pip skipped"
    fi
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
    make_dir "$BIN" || return 1
    tmp="$LAUNCHER.tmp.$$"
    {
        printf '#!/bin/sh\n'
        printf '%s\n' "$LAUNCHER_MARK"
        printf 'exec %s "$@"\n' "$1"
    } >"$tmp" && chmod 755 "$tmp" && mv -f "$tmp" "$LAUNCHER"
    say "  wrote launcher $(tilde "$LAUNCHER")"
}

source_launcher() {
    write_launcher "env PYTHONPATH='$REPO'\${PYTHONPATH:+:\$PYTHONPATH} '$1' -m priors"
}

install_package() {
    say "The priors command:"
    if [ "${PRIORS_INSTALL_SKIP_PACKAGE:-}" = 1 ]; then
        say "  $(would "would be skipped" "skipped") (PRIORS_INSTALL_SKIP_PACKAGE=1)"
        return 0
    fi
    if ! has_package_source; then
        # A checkout without packaging metadata: run the package from the checkout.
        say "  $REPO has no pyproject.toml; the launcher $(would "would run" "will run") the keeper from this checkout."
        source_launcher "$PYABS"
        return $?
    fi
    VERSION=$(source_version)
    if [ "${PRIORS_INSTALL_NO_PIPX:-}" != 1 ] && command -v pipx >/dev/null 2>&1 && ! ours_launcher "$LAUNCHER"; then
        if [ ! -f "$DATA/pipx" ] && pipx list --short 2>/dev/null | grep -q "^$DIST "; then
            say "  left alone: pipx already has a '$DIST' that this script did not install."
            return 0
        fi
        if up_to_date pipx; then
            skipped_pip
            return 0
        fi
        if [ "$DRY" -eq 1 ]; then
            say "  would install $DIST $VERSION with pipx: pipx install --force --python $PYABS $REPO"
            return 0
        fi
        say "  pipx is installing $DIST $VERSION from $REPO (this takes 10–20 seconds)…"
        if pipx install --force --python "$PYABS" "$REPO"; then
            own_data && : >"$DATA/pipx" && write_stamp pipx
            say "  installed with pipx"
            return 0
        fi
        say "  pipx failed; falling back to a private virtual environment"
    fi
    if [ -d "$VENV" ] && [ ! -f "$DATA/$MARK" ]; then
        say "  left alone: $(tilde "$VENV") exists and was not installed by priors."
        return 1
    fi
    if up_to_date venv; then
        skipped_pip
        return 0
    fi
    if [ "$DRY" -eq 1 ]; then
        [ -x "$VENV/bin/python" ] || say "  would create the virtual environment $(tilde "$VENV") with $PYABS"
        say "  would install $DIST $VERSION from $REPO into it with pip"
        write_launcher "'$VENV/bin/python' -I -m priors"
        return 0
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        say "  creating the virtual environment $(tilde "$VENV")"
        if ! own_data; then
            say "  left alone: $(tilde "$DATA") exists and was not made by priors."
            return 1
        fi
        "$PYABS" -m venv "$VENV" || {
            say "  could not create a virtual environment (on Debian/Ubuntu: apt-get install python3-venv)."
            return 1
        }
    fi
    rm -f "$STAMP"
    say "  pip is installing $DIST $VERSION from $REPO (this takes 10–20 seconds)…"
    if "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$REPO" \
        || "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps --no-build-isolation "$REPO"; then
        write_launcher "'$VENV/bin/python' -I -m priors" || return 1
        write_stamp venv
        return 0
    fi
    say "  pip could not build the package (offline?); the launcher will run the keeper from this checkout."
    source_launcher "$VENV/bin/python"
}

uninstall_package() {
    say "The priors command:"
    up_did=0
    if [ -f "$DATA/$MARK" ] && [ -f "$DATA/pipx" ]; then
        up_did=1
        if ! command -v pipx >/dev/null 2>&1; then
            say "  pipx is no longer on PATH; remove the pipx install yourself: pipx uninstall $DIST"
        elif [ "$DRY" -eq 1 ]; then
            say "  would run: pipx uninstall $DIST"
        elif pipx uninstall "$DIST" >/dev/null 2>&1; then
            say "  removed the pipx install of $DIST"
        else
            say "  pipx uninstall $DIST failed; remove it yourself"
        fi
    fi
    if ours_launcher "$LAUNCHER"; then
        up_did=1
        if [ "$DRY" -eq 1 ]; then say "  would remove $(tilde "$LAUNCHER")"; else rm -f "$LAUNCHER" && say "  removed $(tilde "$LAUNCHER")"; fi
    elif [ -e "$LAUNCHER" ] || [ -L "$LAUNCHER" ]; then
        say "  left alone: $(tilde "$LAUNCHER") was not installed by priors"
    fi
    if [ -f "$DATA/$MARK" ] && [ -d "$VENV" ]; then
        up_did=1
        if [ "$DRY" -eq 1 ]; then say "  would remove $(tilde "$VENV")"; else rm -rf "$VENV" && say "  removed $(tilde "$VENV")"; fi
    elif [ -d "$DATA" ] && [ ! -f "$DATA/$MARK" ]; then
        say "  left alone: $(tilde "$DATA") was not installed by priors"
    fi
    [ "$up_did" -eq 1 ] || say "  nothing of ours to remove"
    return 0
}

# --- the skills --------------------------------------------------------------

# Harnesses: "label|config dir|skills dir". Detected when the config dir exists.
harnesses() {
    printf '%s\n' \
        "Claude Code|$HOME/.claude|$HOME/.claude/skills" \
        "Codex|$HOME/.codex|$HOME/.codex/skills" \
        "Agent Skills (cross-client)|$HOME/.agents|$AGENTS_SKILLS" \
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
        # the same skill already there (a second run): say so, touch nothing
        if [ "$LINK" -eq 1 ] && [ -L "$dest" ] && [ "$(readlink "$dest")" = "$src" ]; then
            say "  up to date: $(tilde "$dest") (linked to this checkout)"
            return 0
        fi
        if [ "$LINK" -eq 0 ] && [ ! -L "$dest" ] && [ -d "$dest" ] \
            && diff -rq -x "$MARK" "$src" "$dest" >/dev/null 2>&1; then
            say "  up to date: $(tilde "$dest")"
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
    make_dir "$1" || return 1
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

skills_into() {
    # skills_into LABEL SKILLS-DIR
    say " $1 ($(tilde "$2")):"
    for s in $SKILLS; do
        if [ "$MODE" = install ]; then install_skill "$2" "$s" || return 1; else uninstall_skill "$2" "$s"; fi
    done
}

skills_step() {
    found=0
    missing=""
    codex_has_skill=0
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
            skills_into "$label" "$dir" || return 1
            # Codex reads ~/.codex/skills and the cross-client ~/.agents/skills.
            case "$dir" in "$HOME/.codex/skills"|"$AGENTS_SKILLS") codex_has_skill=1 ;; esac
        else
            missing="$missing$label ($(tilde "$conf") not found)$nl"
        fi
        IFS=$nl
    done
    IFS=$oldifs
    set +f
    [ "$MODE" = install ] || return 0
    if [ "$found" -eq 0 ]; then
        say " No agent harness was found (none of ~/.claude, ~/.codex, ~/.agents, ~/.pi/agent, ~/.openclaw),"
        say " so the skills $(would "would go" "go") to the cross-client folder that Codex, Pi and OpenClaw read:"
        skills_into "Agent Skills (cross-client)" "$AGENTS_SKILLS" || return 1
        codex_has_skill=1
    elif [ -n "$missing" ]; then
        say ""
        say "Not found, so nothing $(would "would be" "was") installed for:"
        printf '%s' "$missing" | sed 's/^/  /'
    fi
    if [ ! -d "$HOME/.claude" ]; then
        say ""
        say "Claude Code reads only ~/.claude/skills: create ~/.claude and run this again, or"
        say "add this checkout as a plugin marketplace, inside Claude Code:"
        say "  /plugin marketplace add $REPO"
        say "  /plugin install priors@priors-marketplace"
    fi
    if [ -d "$HOME/.kimi" ] && [ ! -d "$HOME/.claude" ] && [ ! -d "$HOME/.codex" ]; then
        say ""
        say "Kimi Code CLI: start it with the skills from this checkout:"
        say "  kimi --skills-dir $REPO/skills"
    fi
    say ""
    say "For an agent without one of these skills:"
    if [ "$codex_has_skill" -eq 1 ]; then
        say "  - another agent that reads AGENTS.md: paste $REPO/adapters/AGENTS-snippet.md into the repository's AGENTS.md"
    else
        say "  - Codex or another agent that reads AGENTS.md: paste $REPO/adapters/AGENTS-snippet.md into the repository's AGENTS.md"
    fi
    say "  - any agent with a shell: add $REPO/adapters/system-prompt.md to its system prompt"
    say "  - an agent without a shell: advisory only — give it .priors/PRIORS.md as context"
}

# --- Claude Code lesson hooks (--hooks) -----------------------------------------

hooks_step() {
    say ""
    say "Claude Code lesson hooks ($(tilde "$CLAUDE_SETTINGS")):"
    if [ "$DRY" -eq 1 ]; then
        say "  would copy the hook script to $(tilde "$HOOK_SCRIPT")"
        if [ -f "$CLAUDE_SETTINGS" ]; then
            "$PYABS" "$REPO/hooks/claude_settings.py" add "$CLAUDE_SETTINGS" "$HOOK_SCRIPT" "$(hook_keeper)" --dry-run
            return 0
        fi
        say "  would create $(tilde "$CLAUDE_SETTINGS") holding only the hooks"
        return 0
    fi
    if ! own_data; then
        say "  left alone: $(tilde "$DATA") exists and was not made by priors."
        return 1
    fi
    mkdir -p "$DATA/hooks" && cp "$REPO/hooks/lessons_hook.py" "$HOOK_SCRIPT.tmp.$$" \
        && mv -f "$HOOK_SCRIPT.tmp.$$" "$HOOK_SCRIPT" || return 1
    make_dir "$HOME/.claude" || return 1
    # a settings file this script creates is one it may remove again (--uninstall), once nothing else is in it
    if [ ! -e "$CLAUDE_SETTINGS" ] && [ ! -L "$CLAUDE_SETTINGS" ]; then hk_new=1; else hk_new=0; fi
    "$PYABS" "$REPO/hooks/claude_settings.py" add "$CLAUDE_SETTINGS" "$HOOK_SCRIPT" "$(hook_keeper)" || return 1
    [ "$hk_new" -eq 1 ] && [ -f "$CLAUDE_SETTINGS" ] && : >"$DATA/claude-settings-created"
    return 0
}

# hook_keeper: the full path of the launcher this script wrote, for the hooks to run the keeper with
# (a session's PATH may lack ~/.local/bin); empty when there is none — the hook then looks on PATH.
hook_keeper() {
    if ours_launcher "$LAUNCHER" || [ -f "$DATA/pipx" ] && [ -x "$LAUNCHER" ]; then printf '%s' "$LAUNCHER"; fi
}

unhooks_step() {
    [ -f "$CLAUDE_SETTINGS" ] || [ -d "$DATA/hooks" ] || return 0
    say "Claude Code lesson hooks ($(tilde "$CLAUDE_SETTINGS")):"
    uh_status=0
    uh_created=""
    [ -f "$DATA/claude-settings-created" ] && uh_created="--created"
    if [ -f "$CLAUDE_SETTINGS" ]; then
        if [ "$DRY" -eq 1 ]; then
            "$PYABS" "$REPO/hooks/claude_settings.py" remove "$CLAUDE_SETTINGS" "$HOOK_SCRIPT" $uh_created --dry-run || uh_status=1
        else
            "$PYABS" "$REPO/hooks/claude_settings.py" remove "$CLAUDE_SETTINGS" "$HOOK_SCRIPT" $uh_created || uh_status=1
        fi
    fi
    [ "$DRY" -eq 0 ] && [ "$uh_status" -eq 0 ] && rm -f "$DATA/claude-settings-created"
    if [ -f "$DATA/$MARK" ] && [ -d "$DATA/hooks" ] && [ "$uh_status" -eq 0 ]; then
        if [ "$DRY" -eq 1 ]; then say "  would remove $(tilde "$DATA/hooks")"; else rm -rf "$DATA/hooks" && say "  removed $(tilde "$DATA/hooks")"; fi
    fi
    return "$uh_status"
}

# --- the Pi extension (when Pi is present) -------------------------------------

pi_step() {
    pi_cmd=${PRIORS_PI:-pi}  # the pi command (tests point it elsewhere)
    if [ ! -d "$HOME/.pi/agent" ]; then
        [ "$MODE" = uninstall ] && return 0
        say ""
        if ! command -v "$pi_cmd" >/dev/null 2>&1; then
            say "Pi extension: skipped — no pi command on PATH and no ~/.pi/agent (install Pi, then run ./install.sh again)"
            return 0
        fi
        say "Pi extension ($(tilde "$PI_EXTENSION")):"
        say "  the pi command is here but ~/.pi/agent is not yet; $(would "it would be created" "creating it")"
    else
        say ""
        say "Pi extension ($(tilde "$PI_EXTENSION")):"
    fi
    if [ "$MODE" = uninstall ]; then
        if [ -d "$PI_EXTENSION" ] && [ -f "$PI_EXTENSION/$MARK" ]; then
            if [ "$DRY" -eq 1 ]; then say "  would remove $(tilde "$PI_EXTENSION")"; else rm -rf "$PI_EXTENSION" && say "  removed $(tilde "$PI_EXTENSION")"; fi
        elif [ -e "$PI_EXTENSION" ] || [ -L "$PI_EXTENSION" ]; then
            say "  left alone: $(tilde "$PI_EXTENSION") was not installed by priors"
        fi
        return 0
    fi
    if { [ -e "$PI_EXTENSION" ] || [ -L "$PI_EXTENSION" ]; } && ! { [ -d "$PI_EXTENSION" ] && [ -f "$PI_EXTENSION/$MARK" ]; }; then
        say "  left alone: $(tilde "$PI_EXTENSION") exists and was not installed by priors"
        return 0
    fi
    if [ "$DRY" -eq 1 ]; then
        say "  would install the priors extension (lessons before every prompt, traces, the priors_lessons tool, /priors …)"
        return 0
    fi
    pe_verb=installed
    [ -d "$PI_EXTENSION" ] && pe_verb=updated && rm -rf "$PI_EXTENSION"
    make_dir "$PI_EXTENSION" || return 1
    cp "$REPO/adapters/pi/index.ts" "$REPO/adapters/pi/words.ts" "$REPO/adapters/pi/package.json" "$PI_EXTENSION/" || return 1
    : >"$PI_EXTENSION/$MARK"
    say "  $pe_verb $(tilde "$PI_EXTENSION") (run /reload in a running Pi)"
}

# --- the MCP server ------------------------------------------------------------

# mcp_command: what a client runs — this install's launcher when there is one, else `priors` on PATH.
mcp_command() {
    if [ -f "$LAUNCHER" ]; then
        case "$LAUNCHER" in *'"'*|*\\*) printf 'priors' ;; *) printf '%s' "$LAUNCHER" ;; esac
    else
        printf 'priors'
    fi
}

codex_block() {
    printf '%s\n[mcp_servers.priors]\ncommand = "%s"\nargs = ["mcp"]\n%s\n' "$MCP_BEGIN" "$1" "$MCP_END"
}

# toml_ok FILE: FILE parses as TOML (when this Python has tomllib, 3.11+; otherwise trusted).
toml_ok() {
    "$PYABS" -c '
import sys
try:
    import tomllib
except ImportError:
    sys.exit(0)
with open(sys.argv[1], "rb") as fh:
    tomllib.load(fh)
' "$1" >/dev/null 2>&1
}

# snippet_command: what a printed snippet runs — `priors` when ~/.local/bin is on PATH (or there is no
# launcher), else the launcher's full path: a bare `priors` there would register a command that is not found.
snippet_command() {
    case ":${PATH:-}:" in
        *":$BIN:"*) printf 'priors' ;;
        *) mcp_command ;;
    esac
}

claude_snippet() { say "    claude mcp add --scope user priors -- $(snippet_command) mcp"; }
codex_snippet() {
    say "    [mcp_servers.priors]"
    say "    command = \"$(snippet_command)\""
    say "    args = [\"mcp\"]"
}

mcp_claude() {
    [ -d "$HOME/.claude" ] || return 0
    mc_cmd=$(mcp_command)
    if [ "${PRIORS_INSTALL_NO_MCP:-}" = 1 ]; then
        say " Claude Code: not registered (PRIORS_INSTALL_NO_MCP=1); to register it:"
        claude_snippet
    elif ! command -v "$CLAUDE" >/dev/null 2>&1; then
        say " Claude Code: the claude command is not on PATH; register the server with:"
        claude_snippet
    elif "$CLAUDE" mcp get priors >/dev/null 2>&1; then
        if [ -f "$DATA/mcp-claude" ]; then
            say " Claude Code: the server priors is registered (claude mcp get priors)"
        else
            say " Claude Code: left alone: it already has an MCP server named priors that install.sh did not add"
        fi
    elif [ "$DRY" -eq 1 ]; then
        say " Claude Code: would run: claude mcp add --scope user priors -- $mc_cmd mcp"
    elif "$CLAUDE" mcp add --scope user priors -- "$mc_cmd" mcp >/dev/null 2>&1; then
        own_data && : >"$DATA/mcp-claude"
        say " Claude Code: registered the server (claude mcp add --scope user priors -- $mc_cmd mcp)"
    else
        say " Claude Code: 'claude mcp add' failed; register the server yourself:"
        claude_snippet
    fi
}

mcp_codex() {
    [ -d "$HOME/.codex" ] || return 0
    mx_cmd=$(mcp_command)
    if [ "${PRIORS_INSTALL_NO_MCP:-}" = 1 ]; then
        say " Codex: not registered (PRIORS_INSTALL_NO_MCP=1); to register it, add to ~/.codex/config.toml:"
        codex_snippet
        return 0
    fi
    if [ -f "$CODEX_CONF" ] && grep -qxF "$MCP_BEGIN" "$CODEX_CONF"; then
        say " Codex: the server priors is registered in ~/.codex/config.toml"
        return 0
    fi
    if [ -L "$CODEX_CONF" ] || { [ -e "$CODEX_CONF" ] && [ ! -f "$CODEX_CONF" ]; } \
        || { [ -f "$CODEX_CONF" ] && { grep -q priors "$CODEX_CONF" || grep -q '^[ 	]*mcp_servers[ 	]*=' "$CODEX_CONF"; }; }; then
        say " Codex: left alone: ~/.codex/config.toml already names priors (or is not a plain file); make sure it holds:"
        codex_snippet
        return 0
    fi
    if [ "$DRY" -eq 1 ]; then
        say " Codex: would add [mcp_servers.priors] (command \"$mx_cmd\") to ~/.codex/config.toml, in a marked block"
        return 0
    fi
    mx_new=0
    [ -f "$CODEX_CONF" ] || mx_new=1
    mx_tmp="$CODEX_CONF.priors-tmp.$$"
    if [ "$mx_new" -eq 0 ]; then
        cp -p "$CODEX_CONF" "$mx_tmp" || return 1  # keeps the file's permissions: it may hold tokens
        {
            cat "$CODEX_CONF"
            [ -z "$(tail -c 1 "$CODEX_CONF")" ] || printf '\n'
            codex_block "$mx_cmd"
        } >"$mx_tmp" || { rm -f "$mx_tmp"; return 1; }
    else
        codex_block "$mx_cmd" >"$mx_tmp" || { rm -f "$mx_tmp"; return 1; }
    fi
    if ! toml_ok "$mx_tmp"; then
        rm -f "$mx_tmp"
        say " Codex: left alone: ~/.codex/config.toml would not parse with the server added; add it yourself:"
        codex_snippet
        return 0
    fi
    mv -f "$mx_tmp" "$CODEX_CONF" || return 1
    [ "$mx_new" -eq 0 ] || { own_data && : >"$DATA/mcp-codex-created"; }
    say " Codex: registered the server in ~/.codex/config.toml ([mcp_servers.priors], a marked block)"
}

mcp_step() {
    say ""
    say "MCP server (priors mcp: the keeper's tools, for agent clients that speak MCP):"
    mcp_claude
    mcp_codex
    say " Other clients (Cursor, VS Code, Claude Desktop, Zed, Goose, …): add to their mcpServers JSON:"
    say "    {\"mcpServers\": {\"priors\": {\"command\": \"$(snippet_command)\", \"args\": [\"mcp\"]}}}"
}

mcp_uninstall() {
    say "MCP server:"
    mu_did=0
    if [ -f "$DATA/$MARK" ] && [ -f "$DATA/mcp-claude" ]; then
        mu_did=1
        if ! command -v "$CLAUDE" >/dev/null 2>&1; then
            say "  the claude command is not on PATH; remove the server yourself: claude mcp remove --scope user priors"
        elif [ "$DRY" -eq 1 ]; then
            say "  would run: claude mcp remove --scope user priors"
        elif "$CLAUDE" mcp remove --scope user priors >/dev/null 2>&1; then
            rm -f "$DATA/mcp-claude"
            say "  removed the Claude Code registration (claude mcp remove --scope user priors)"
        else
            say "  'claude mcp remove --scope user priors' failed; remove it yourself"
        fi
    fi
    if [ -f "$CODEX_CONF" ] && [ ! -L "$CODEX_CONF" ] && grep -qxF "$MCP_BEGIN" "$CODEX_CONF"; then
        mu_did=1
        if [ "$DRY" -eq 1 ]; then
            say "  would remove the marked priors block from ~/.codex/config.toml"
        else
            mu_tmp="$CODEX_CONF.priors-tmp.$$"
            cp -p "$CODEX_CONF" "$mu_tmp" \
                && awk -v b="$MCP_BEGIN" -v e="$MCP_END" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' \
                    "$CODEX_CONF" >"$mu_tmp" \
                && mv -f "$mu_tmp" "$CODEX_CONF" || { rm -f "$mu_tmp"; return 1; }
            if [ -f "$DATA/mcp-codex-created" ] && [ -z "$(tr -d ' \t\n' <"$CODEX_CONF")" ]; then
                rm -f "$CODEX_CONF" "$DATA/mcp-codex-created"
                say "  removed ~/.codex/config.toml (install.sh created it for the server)"
            else
                say "  removed the marked priors block from ~/.codex/config.toml"
            fi
        fi
    fi
    [ "$mu_did" -eq 1 ] || say "  nothing of ours to remove"
    return 0
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
    if [ "$HOOKS" -eq 1 ] && [ "$DRY" -eq 0 ] && [ ! -d "$HOME/.claude" ]; then
        # --hooks is for Claude Code: its folder, made now rather than by the hooks step, gets the skills too
        make_dir "$HOME/.claude" && say "Made ~/.claude for Claude Code (--hooks): its skills and hooks go there."
    fi
    skills_step || status=1
    pi_step || status=1
    [ "$HOOKS" -eq 1 ] && { hooks_step || status=1; }
    mcp_step || status=1
    path_hint
    say ""
    if [ "$DRY" -eq 1 ]; then
        say "Dry run finished: nothing was changed. Run it without --dry-run to do the above."
    elif [ "$status" -eq 0 ]; then
        say "Done. Try it in a scratch folder: priors demo"
    else
        say "Finished with problems (see above)."
    fi
else
    PYABS=$(command -v "$PY" 2>/dev/null || printf '%s' "$PY")
    skills_step || status=1
    pi_step || status=1
    unhooks_step || status=1
    mcp_uninstall || status=1
    uninstall_package || status=1
    forget_created
    say ""
    if [ "$DRY" -eq 1 ]; then
        say "Dry run finished: nothing was removed. Ledgers (.priors/ folders in your repositories) would not be touched."
    else
        say "Done. Ledgers (.priors/ folders in your repositories) were not touched."
    fi
fi
exit "$status"
