#!/bin/sh
# Palisade agent, one-line install and upgrade (docs/agent.md, "One-line install"), served by the
# console at /install/agent.sh with its own address filled in (CONSOLE below):
#
#   curl -fsSL <console>/install/agent.sh -o palisade-install.sh && sudo sh palisade-install.sh --token enr_…
#
# (saved to a file first: `curl … | sh` runs an empty script and succeeds when the download fails).
# Checks (each refuses and changes nothing): root, Linux, x86_64, glibc (not musl). Downloads the .deb (or, without
# dpkg, the single executable) and SHA256SUMS from the console, verifies the sum before installing
# anything, installs, starts the agent (systemd when it runs, else `palisade-agent supervise` in the
# background, which restarts the agent and applies its updates) and runs
# `palisade-agent register` with the token. Re-running it upgrades in place: the .deb keeps
# /etc/palisade-agent and /var/lib/palisade-agent (key, lists, baseline, enrolment), and an agent
# already registered is not registered again.
#
# Options: --token T   the enrolment token (enr_…); not needed to upgrade a registered agent
#          --console U the console's address (default: the one this script came from)
#          --name N    the server's name in the console (default: the hostname)
#          --url U     the address the console reaches the agent at (default: the address the
#                      console sees the registration come from, with the agent's port)
#          --connect M how the console reaches the agent: auto (default: direct when the console
#                      reaches the agent's address at registration, else the agent keeps an
#                      outbound link to the console), direct or outbound
#          --release-key K  the release public key (base64, from the console's install line):
#                      SHA256SUMS must carry its Ed25519 signature (SHA256SUMS.sig), checked with
#                      openssl (1.1.1+) or an installed palisade-agent, before anything is installed;
#                      the key is pinned at /etc/palisade/release.pub and later runs need its signature
#          --protect S enable the shipped log patterns of these services at once: a comma list of
#                      sshd, nginx, apache, postfix, dovecot, or auto (every one found on this host);
#                      written to protection.protect in the config (a re-run replaces it)
#          --exe       install the single executable even where dpkg exists
#          --uninstall stop and remove the agent (`palisade-agent uninstall`); with --purge its
#                      config and state too, with --forget its server in the console too
# For tests, these stand in for the host's answers: PALISADE_INSTALL_UNAME_S (uname -s),
# PALISADE_INSTALL_UNAME_M (uname -m), PALISADE_INSTALL_UID (id -u); PALISADE_INSTALL_WAIT_S (30)
# is how long the agent has to start before registering.
set -eu

# Filled in by the console as single-quoted sh words (packages/console/src/routes/install/index.ts).
CONSOLE=@CONSOLE_URL@
VERSION=@VERSION@
# The services --protect may name (PROTECTED_SERVICES in packages/protocol/src/control.ts).
SERVICES=@PROTECTED_SERVICES@
TOKEN=''
NAME=''
URL=''
CONNECT=auto
EXE_ONLY=0
RELEASE_KEY=''
PROTECT=''
PINNED=/etc/palisade/release.pub
UNINSTALL=0
PURGE=0
FORGET=0
WAIT=${PALISADE_INSTALL_WAIT_S:-30}
STARTED=$(date +%s)

say() { printf 'palisade-install: %s\n' "$*"; }
die() {
  printf 'palisade-install: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --token) [ $# -ge 2 ] || die "--token needs a value"; TOKEN=$2; shift 2 ;;
    --console) [ $# -ge 2 ] || die "--console needs a value"; CONSOLE=${2%/}; shift 2 ;;
    --name) [ $# -ge 2 ] || die "--name needs a value"; NAME=$2; shift 2 ;;
    --url) [ $# -ge 2 ] || die "--url needs a value"; URL=$2; shift 2 ;;
    --connect) [ $# -ge 2 ] || die "--connect needs a value"; CONNECT=$2; shift 2 ;;
    --release-key) [ $# -ge 2 ] || die "--release-key needs a value"; RELEASE_KEY=$2; shift 2 ;;
    --protect) [ $# -ge 2 ] || die "--protect needs a value"; PROTECT=$2; shift 2 ;;
    --exe) EXE_ONLY=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    --forget) FORGET=1; shift ;;
    *) die "unknown option $1 (expected --token, --console, --name, --url, --connect, --release-key, --protect, --exe, --uninstall, --purge or --forget)" ;;
  esac
done
case "$CONNECT" in
  auto | direct | outbound) ;;
  *) die "--connect: expected auto, direct or outbound, not $CONNECT. Nothing was changed." ;;
esac
# --protect: letters, digits and commas only, each name known (or auto alone); shown as given.
if [ -n "$PROTECT" ]; then
  case "$PROTECT" in
    *[!A-Za-z0-9,]*) die "--protect: expected auto or service names separated by commas ($(echo "$SERVICES" | tr ' ' ',')), with letters, digits and commas only. Nothing was changed." ;;
  esac
  if [ "$PROTECT" != auto ]; then
    for service in $(echo "$PROTECT" | tr ',' ' '); do
      [ "$service" != auto ] || die "--protect: auto stands alone, without service names. Nothing was changed."
      case " $SERVICES " in
        *" $service "*) ;;
        *) die "--protect: unknown service $service; expected auto or names from $(echo "$SERVICES" | tr ' ' ','). Nothing was changed." ;;
      esac
    done
  fi
fi

os=${PALISADE_INSTALL_UNAME_S:-$(uname -s)}
[ "$os" = Linux ] || die "this host runs $os; the agent runs on Linux only. Nothing was changed."
arch=${PALISADE_INSTALL_UNAME_M:-$(uname -m)}
case "$arch" in
  x86_64 | amd64) ;;
  *) die "this CPU is $arch; the agent is built for x86_64 (amd64) only. Nothing was changed." ;;
esac
case "$WAIT" in '' | *[!0-9]*) die "PALISADE_INSTALL_WAIT_S: expected whole seconds, not $WAIT" ;; esac
uid=${PALISADE_INSTALL_UID:-$(id -u)}
[ "$uid" = 0 ] || die "run as root: sudo sh palisade-install.sh --token ..., or the same without sudo in a root shell. Nothing was changed."

if [ "$UNINSTALL" = 1 ]; then
  # The agent removes itself (docs/agent.md, "Uninstall"): the package through dpkg, whose
  # maintainer scripts stop it whatever the init system, or the single executable by itself.
  for bin in /usr/bin/palisade-agent /usr/local/bin/palisade-agent; do
    if [ -x "$bin" ]; then
      set -- uninstall
      [ "$PURGE" = 0 ] || set -- "$@" --purge
      [ "$FORGET" = 0 ] || set -- "$@" --forget
      exec "$bin" "$@"
    fi
  done
  die "no palisade-agent is installed here (neither /usr/bin/palisade-agent nor /usr/local/bin/palisade-agent). Nothing was changed."
fi
[ "$PURGE" = 0 ] && [ "$FORGET" = 0 ] || die "--purge and --forget go with --uninstall. Nothing was changed."

# The executable is linked against glibc (2.28 or newer); on musl it cannot even start.
if command -v ldd >/dev/null 2>&1 && ldd --version 2>&1 | grep -qi musl; then
  die "this host's C library is musl (Alpine or similar); the agent is built for glibc 2.28 or newer (Debian 10+, Ubuntu 20.04+, RHEL 8+). Nothing was changed."
fi
case "$CONSOLE" in
  http://*)
    printf 'palisade-install: warning: %s is plain HTTP: the packages, the token and the agent key cross the network unencrypted (the SHA-256 comes from the same console). Serve the console over HTTPS (docs/deploy.md).\n' "$CONSOLE" >&2
    ;;
esac
for tool in curl sha256sum awk; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is needed and missing. Nothing was changed."
done

CONF=/etc/palisade-agent/agent.conf
STATE=/var/lib/palisade-agent
LOG=/var/log/palisade-agent.log

# Root never writes through a link (docs/security.md, "Install script and package"): a file root
# writes or changes must be a regular file with one name, or not exist yet.
not_plain_file() {
  [ -L "$1" ] || { [ -e "$1" ] && { [ ! -f "$1" ] || [ "$(stat -c %h -- "$1")" != 1 ]; }; }
}
SYSTEMD=0
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then SYSTEMD=1; fi
if [ "$SYSTEMD" = 0 ] && not_plain_file "$LOG"; then
  die "$LOG is not a regular file with one name (a symbolic link, a hard link or another file): the agent's output is never written through it. Look at it, remove it and run the line again. Nothing was changed."
fi
# A fresh install (no agent here, none registered) is undone again if its registration is refused.
FRESH=0
if [ ! -e /usr/bin/palisade-agent ] && [ ! -e /usr/local/bin/palisade-agent ] && [ ! -f "$STATE/enrolment.json" ]; then
  FRESH=1
fi
if [ -z "$TOKEN" ] && [ ! -f "$STATE/enrolment.json" ]; then
  die "--token is required: create one in the console (Add server, Install with one command). Nothing was changed."
fi

if [ "$EXE_ONLY" = 0 ] && command -v dpkg >/dev/null 2>&1; then
  ARTIFACT="palisade-agent_${VERSION}_amd64.deb"
  BIN=/usr/bin/palisade-agent
else
  ARTIFACT="palisade-agent-${VERSION}-linux-x64"
  BIN=/usr/local/bin/palisade-agent
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
# A refusal's text (a 503 saying to run `npm run package`) is printed, printable ASCII only.
fetch() {
  code=$(curl -sSL --retry 2 --retry-delay 1 -o "$TMP/$1" -w '%{http_code}' "$CONSOLE/install/$1") ||
    die "could not download $1 from $CONSOLE (curl said why above). Nothing was changed."
  if [ "$code" != 200 ]; then
    printf 'palisade-install: the console answered HTTP %s for %s:\n' "$code" "$1" >&2
    head -c 2000 "$TMP/$1" | tr -cd '\11\12\40-\176' >&2
    die "could not download $1 from $CONSOLE. Nothing was changed."
  fi
}
# Signed releases (docs/agent.md, "Signed releases"): the key the line carries, or the one pinned
# here at the first install; a line carrying another key than the pinned one is refused.
for path in /etc/palisade "$PINNED"; do
  [ ! -L "$path" ] || die "$path is a symbolic link: the release key is never read or written through one. Remove it and run the line again. Nothing was changed."
done
pem() { printf -- '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA%s\n-----END PUBLIC KEY-----\n' "$1"; }
if [ -n "$RELEASE_KEY" ]; then
  case "$RELEASE_KEY" in
    *[!A-Za-z0-9+/=]*) die "--release-key: expected the release public key in base64 (44 characters), not $RELEASE_KEY. Nothing was changed." ;;
  esac
  [ "${#RELEASE_KEY}" = 44 ] || die "--release-key: expected 44 base64 characters, got ${#RELEASE_KEY}. Nothing was changed."
  pem "$RELEASE_KEY" >"$TMP/release.pub"
  if [ -e "$PINNED" ]; then
    not_plain_file "$PINNED" && die "$PINNED is not a regular file with one name. Nothing was changed."
    cmp -s "$TMP/release.pub" "$PINNED" ||
      die "--release-key $RELEASE_KEY is not the release key this host pinned at its first install ($PINNED): a console serving other artifacts is refused. To trust a new key, remove $PINNED and run the line again. Nothing was changed."
  fi
elif [ -e "$PINNED" ]; then
  not_plain_file "$PINNED" && die "$PINNED is not a regular file with one name. Nothing was changed."
  cp "$PINNED" "$TMP/release.pub"
fi

# Whether SHA256SUMS.sig is the pinned key's signature of SHA256SUMS: openssl 1.1.1 or newer, else an
# agent already installed here (`palisade-agent verify-release`); neither, and nothing is installed.
verify_signature() {
  if command -v openssl >/dev/null 2>&1; then
    case "$(openssl version 2>/dev/null)" in
      'OpenSSL 0.'* | 'OpenSSL 1.0.'* | 'OpenSSL 1.1.0'*) ;;
      *)
        openssl pkeyutl -verify -pubin -inkey "$TMP/release.pub" -rawin -in "$TMP/SHA256SUMS" \
          -sigfile "$TMP/SHA256SUMS.sig" >"$TMP/verify.log" 2>&1
        return
        ;;
    esac
  fi
  for bin in /usr/bin/palisade-agent /usr/local/bin/palisade-agent; do
    if [ -x "$bin" ]; then
      "$bin" verify-release --sums "$TMP/SHA256SUMS" --sig "$TMP/SHA256SUMS.sig" --key-file "$TMP/release.pub" >"$TMP/verify.log" 2>&1
      return
    fi
  done
  die "checking the release signature needs openssl 1.1.1 or newer (apt-get install openssl), and it is missing. Nothing was changed."
}

say "downloading $ARTIFACT from $CONSOLE"
fetch SHA256SUMS
if [ -f "$TMP/release.pub" ]; then
  fetch SHA256SUMS.sig
  if ! verify_signature; then
    tr -cd '\11\12\40-\176' <"$TMP/verify.log" | head -c 2000 >&2
    die "SHA256SUMS from $CONSOLE is not signed by the pinned release key ($(sed -n 2p "$TMP/release.pub" | cut -c17-)): refused. Nothing was changed."
  fi
  say "SHA256SUMS signature verified (release key $(sed -n 2p "$TMP/release.pub" | cut -c17-))"
else
  say "warning: no release key on the line and none pinned: only the SHA-256 from the same console guards the download (docs/agent.md, \"Signed releases\")"
fi
fetch "$ARTIFACT"
expected=$(awk -v f="$ARTIFACT" '$2 == f { print $1 }' "$TMP/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS from the console has no line for $ARTIFACT. Nothing was changed."
actual=$(sha256sum "$TMP/$ARTIFACT" | awk '{ print $1 }')
[ "$actual" = "$expected" ] || die "checksum mismatch for $ARTIFACT: SHA256SUMS says $expected, the download is $actual. Nothing was changed."
say "SHA-256 verified ($actual)"
# The key that verified is pinned for later runs and the agent: root's, 0644, through no link
# (renamed over the name, which replaces a link there rather than following it).
if [ -f "$TMP/release.pub" ] && ! cmp -s "$TMP/release.pub" "$PINNED" 2>/dev/null; then
  mkdir -p /etc/palisade && chmod 0755 /etc/palisade
  pinned_new=$(mktemp /etc/palisade/.release.pub.XXXXXX)
  cat "$TMP/release.pub" >"$pinned_new" && chmod 0644 "$pinned_new" && mv -f "$pinned_new" "$PINNED" ||
    die "could not write $PINNED"
  say "release key pinned at $PINNED"
fi

# --protect becomes protection.protect in the config, replacing an earlier value, before the agent
# starts (it enables the services' patterns at start: docs/protection.md). The package gives the
# agent's user the config directory: root takes it back while it writes, and writes a new file
# that it renames over the name, so nothing is written through a link.
set_protect() {
  [ -n "$PROTECT" ] || return 0
  conf_dir=$(dirname "$CONF")
  { [ ! -L "$conf_dir" ] && [ -d "$conf_dir" ]; } || die "$conf_dir is not a directory (a symbolic link or missing); --protect was not written"
  dir_owner=$(stat -c %u:%g -- "$conf_dir")
  chown -h root:root "$conf_dir"
  chmod 0700 "$conf_dir"
  ! not_plain_file "$CONF" || die "$CONF is not a regular file with one name (a symbolic link, a hard link or another file); remove it and run the line again"
  conf_owner=$dir_owner
  [ ! -e "$CONF" ] || conf_owner=$(stat -c %u:%g -- "$CONF")
  conf_new=$(mktemp "$conf_dir/.agent.conf.XXXXXX")
  { [ ! -e "$CONF" ] || grep -v '^[[:space:]]*protection\.protect[[:space:]]*=' "$CONF" || true; } >"$conf_new"
  printf 'protection.protect = %s\n' "$PROTECT" >>"$conf_new"
  chmod 0600 "$conf_new" && chown -h "$conf_owner" "$conf_new" && mv -f "$conf_new" "$CONF" ||
    die "could not write $CONF"
  chown -h "$dir_owner" "$conf_dir"
  say "protection.protect = $PROTECT written to $CONF: the agent enables those services' log patterns when it starts"
}

# Whether a process runs (a child that exited stays a zombie until reaped: not running).
alive() {
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
  [ -n "$state" ] && [ "$state" != Z ]
}

# Without systemd the agent runs under `palisade-agent supervise` in the background (or, installed
# by an older script, alone); an upgrade stops the old one first: the supervisor first (it would
# start the agent again), then the agent. The pid files are in a directory the agent's user owns:
# root signals a pid only when it runs a palisade-agent executable, and never reads through a link.
stop_pid_file() {
  [ -f "$1" ] && [ ! -L "$1" ] || return 0
  pid=$(head -c 32 "$1" 2>/dev/null || true)
  case "$pid" in '' | *[!0-9]*) pid='' ;; esac
  exe=''
  [ -z "$pid" ] || exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  case "$exe" in
    /usr/bin/palisade-agent | /usr/local/bin/palisade-agent | "/usr/bin/palisade-agent (deleted)" | "/usr/local/bin/palisade-agent (deleted)") ;;
    *) pid='' ;;
  esac
  if [ -n "$pid" ] && alive "$pid"; then
    kill "$pid" 2>/dev/null || true
    i=0
    while alive "$pid" && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
  fi
}
stop_background() {
  stop_pid_file "$STATE/supervisor.pid"
  stop_pid_file "$STATE/agent.pid"
}

if [ "$ARTIFACT" = "palisade-agent_${VERSION}_amd64.deb" ]; then
  [ "$SYSTEMD" = 1 ] || stop_background
  say "installing $ARTIFACT with dpkg (an upgrade keeps /etc/palisade-agent and $STATE)"
  dpkg -i "$TMP/$ARTIFACT" >"$TMP/dpkg.log" 2>&1 || {
    cat "$TMP/dpkg.log" >&2
    die "dpkg -i failed"
  }
else
  [ "$SYSTEMD" = 1 ] || stop_background
  say "installing the single executable as $BIN"
  install -m 0755 "$TMP/$ARTIFACT" "$BIN.new" && mv -f "$BIN.new" "$BIN"
  for dir in /etc/palisade-agent "$STATE"; do
    [ ! -L "$dir" ] || die "$dir is a symbolic link; remove it and run the line again"
  done
  mkdir -p /etc/palisade-agent "$STATE"
  chmod 0700 /etc/palisade-agent "$STATE"
  ! not_plain_file "$CONF" || die "$CONF is not a regular file with one name (a symbolic link, a hard link or another file); remove it and run the line again"
  [ -e "$CONF" ] || (umask 077 && set -C && : >"$CONF") || die "could not create $CONF"
  chmod 0600 "$CONF"
  if [ "$SYSTEMD" = 1 ] && [ ! -f /etc/systemd/system/palisade-agent.service ]; then
    cat >/etc/systemd/system/palisade-agent.service <<UNIT
[Unit]
Description=Palisade agent
After=network-online.target

[Service]
ExecStart=$BIN run --config $CONF --state-dir $STATE
ExecReload=/bin/kill -HUP \$MAINPID
Restart=on-failure

[Install]
WantedBy=multi-user.target
UNIT
    systemctl daemon-reload
  fi
  # The root updater and the path unit that starts it when the agent requests an update, as the
  # package has them (packages/agent/packaging/palisade-agent-update.*; docs/agent.md, "The root updater").
  if [ "$SYSTEMD" = 1 ] && [ ! -f /etc/systemd/system/palisade-agent-update.path ]; then
    cat >/etc/systemd/system/palisade-agent-update.service <<UNIT
[Unit]
Description=Palisade agent: apply a requested update (swap, restart, roll back)
After=palisade-agent.service

[Service]
Type=oneshot
ExecStart=$BIN apply-update --state-dir $STATE --bin $BIN --release-key-file $PINNED --systemd-unit palisade-agent.service
TimeoutStartSec=70min
CapabilityBoundingSet=CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=$(dirname "$BIN") $STATE
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
RestrictAddressFamilies=AF_UNIX
UMask=0022
UNIT
    cat >/etc/systemd/system/palisade-agent-update.path <<UNIT
[Unit]
Description=Palisade agent: watch for an update the agent requested

[Path]
PathExists=$STATE/update/request.json
PathChanged=$STATE/update/request.json
Unit=palisade-agent-update.service

[Install]
WantedBy=paths.target
UNIT
    systemctl daemon-reload
    systemctl enable --now palisade-agent-update.path >/dev/null 2>&1 || true
  fi
fi

# Whether the agent started in the background stopped: its supervisor is gone, or said in the log
# (since it started) that the agent stopped.
agent_stopped() {
  ! alive "$AGENT_PID" || tail -c +$((LOG_START + 1)) "$LOG" 2>/dev/null | grep -q 'supervise: the agent stopped'
}

set_protect

if [ "$SYSTEMD" = 1 ]; then
  systemctl enable palisade-agent.service >/dev/null 2>&1 || true
  systemctl restart palisade-agent.service
  say "started with systemd (journalctl -u palisade-agent)"
else
  # The log: root's, 0640, group adm (root where there is none), made new or checked, never
  # followed through a link; with systemd the journal holds the output instead.
  ! not_plain_file "$LOG" || die "$LOG is not a regular file with one name (a symbolic link, a hard link or another file); remove it and run the line again"
  [ -e "$LOG" ] || (umask 077 && set -C && : >"$LOG") || die "could not create $LOG"
  log_group=root
  if getent group adm >/dev/null 2>&1; then log_group=adm; fi
  chown -h "root:$log_group" "$LOG"
  chmod 0640 "$LOG"
  # The supervisor (root) runs the agent as its child, as the unit runs it where the package made
  # its user: that user, CAP_NET_ADMIN only (setpriv); it restarts the agent when it stops and
  # applies the updates the agent requests (docs/agent.md, "The root updater").
  LOG_START=$(wc -c <"$LOG")
  nohup "$BIN" supervise --config "$CONF" --state-dir "$STATE" >>"$LOG" 2>&1 </dev/null &
  AGENT_PID=$!
  say "systemd is not running: started \`$BIN supervise\` in the background (log $LOG); it restarts the agent if it stops and applies its updates"
  say "nothing starts it at boot: have this host's init run \`$BIN supervise --config $CONF --state-dir $STATE\` as root (or run this line again after a reboot)"
  if getent passwd palisade-agent >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
    say "it runs as palisade-agent: log patterns read /var/log/auth.log and most logs only in the adm group (usermod -aG adm palisade-agent, then run this line again)"
  fi
  # Until it answers on its control socket, or it stops: a port taken is said now, not after the wait.
  i=0
  while [ ! -S "$STATE/agent.sock" ] && ! agent_stopped && [ "$i" -lt $((WAIT * 10)) ]; do
    sleep 0.1
    i=$((i + 1))
  done
fi

# Why the agent started in the background stopped (its last error line), or nothing when it runs.
agent_failure() {
  [ "$SYSTEMD" = 0 ] && agent_stopped || return 0
  line=$(grep -i 'error\|cannot\|palisade-agent:' "$LOG" 2>/dev/null | tail -n 1 | tr -cd '\11\40-\176')
  case "$line" in
    *'already in use'*)
      printf 'the agent could not start: address already in use (%s). Another program listens on its port: find it with `ss -ltnp`, stop it or set metrics.listen in %s, then run the line again' "$line" "$CONF"
      ;;
    *) printf 'the agent stopped at once (%s; more in %s); fix the cause and run the line again' "${line:-no error in the log}" "$LOG" ;;
  esac
}

# Stops the supervisor started above (it stops its agent first); a watchdog kills it after 20 s.
stop_supervisor_started() {
  kill "$AGENT_PID" 2>/dev/null || true
  (sleep 20 && kill -9 "$AGENT_PID" 2>/dev/null) &
  watchdog=$!
  wait "$AGENT_PID" 2>/dev/null || true
  kill "$watchdog" 2>/dev/null || true
}
# An agent that could not start is not left to its supervisor's retries: it is stopped, as it was.
fail_stopped() {
  [ "$SYSTEMD" = 1 ] || stop_supervisor_started
  die "$1"
}

if [ -n "$TOKEN" ]; then
  set -- register --console "$CONSOLE" --token "$TOKEN" --connect "$CONNECT" --config "$CONF" --state-dir "$STATE"
  [ -z "$NAME" ] || set -- "$@" --name "$NAME"
  [ -z "$URL" ] || set -- "$@" --url "$URL"
  failed=$(agent_failure)
  if [ -n "$failed" ]; then
    [ "$FRESH" = 0 ] || rm -f "$STATE/agent-key.json"
    fail_stopped "$failed. Nothing was registered and the token was not used"
  fi
  [ "$WAIT" -gt 0 ] || WAIT=1
  set -- "$@" --wait "$WAIT"
  rc=0
  "$BIN" "$@" || rc=$?
  if [ "$rc" != 0 ]; then
    failed=$(agent_failure)
    # A new token only where the console refused this one (exit 3: unknown, expired, used up, revoked).
    if [ -n "$failed" ]; then
      advice="$failed; the token was not used"
    elif [ "$rc" = 3 ]; then
      advice="run the line again with a new token"
    else
      advice="the token was not used: run the line again once the cause (above) is fixed"
    fi
    if [ "$FRESH" = 1 ] && [ ! -f "$STATE/enrolment.json" ]; then
      # Nothing that was refused keeps running: no agent on its port, no key that works.
      if [ "$SYSTEMD" = 1 ]; then
        systemctl stop palisade-agent.service >/dev/null 2>&1 || true
        systemctl disable palisade-agent.service >/dev/null 2>&1 || true
      else
        stop_supervisor_started
      fi
      rm -f "$STATE/agent-key.json"
      die "registering failed (above), so the agent was stopped again and its key removed: nothing listens on its port. The package stays installed; $advice"
    fi
    [ -n "$failed" ] || die "the agent is installed and running, but registering failed (above); $advice"
    fail_stopped "$advice"
  fi
else
  failed=$(agent_failure)
  [ -z "$failed" ] || fail_stopped "$failed"
  say "upgraded; the agent keeps its registration ($("$BIN" --version))"
fi
say "done in $(($(date +%s) - STARTED)) s"
