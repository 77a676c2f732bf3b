# shellcheck shell=bash
# Shared by the scripts of this repository: pick a JDK, make sure the host tools Box needs exist.
# Source it; it defines functions only.

# Prints the major version of the java binary $1 (17, 21, 25, ...), or nothing. Reads the JDK's
# release file when it has one (`$1` is `<jdk>/bin/java`): starting a JVM for `java -version` costs
# 30-50 ms per JDK, which the ./box launcher would pay on every start.
box_java_major() {
  local version="" release="${1%/*/*}/release" line
  if [ -f "$release" ]; then
    # Read with the shell's builtins: the launcher runs this for every JDK it looks at.
    while IFS= read -r line; do
      case "$line" in
        JAVA_VERSION=\"*)
          version="${line#JAVA_VERSION=\"}"
          version="${version%%\"*}"
          break
          ;;
      esac
    done <"$release"
  fi
  [ -n "$version" ] ||
    version="$("$1" -version 2>&1 | sed -n 's/^[^"]*version "\([^"]*\)".*$/\1/p' | head -n 1)"
  version="${version#1.}"
  printf '%s' "${version%%[!0-9]*}"
}

# Sets and exports JAVA_HOME to a JDK 25 or newer, which the build requires (it compiles for release
# 21): the newest Temurin 25+ under /usr/lib/jvm, else another JDK 25+ there, else $JAVA_HOME, else
# the java on PATH. Fails with a message.
box_pick_jdk() {
  local candidate major best="" best_major=0
  for candidate in /usr/lib/jvm/temurin-2[5-9]* /usr/lib/jvm/*; do
    [ -x "$candidate/bin/javac" ] || continue
    major="$(box_java_major "$candidate/bin/java")"
    if [ -n "$major" ] && [ "$major" -ge 25 ] && [ "$major" -gt "$best_major" ]; then
      best="$candidate"
      best_major="$major"
    fi
  done
  if [ -z "$best" ] && [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major="$(box_java_major "$JAVA_HOME/bin/java")"
    [ -n "$major" ] && [ "$major" -ge 25 ] && best="$JAVA_HOME"
  fi
  if [ -z "$best" ] && command -v javac >/dev/null 2>&1; then
    candidate="$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")"
    major="$(box_java_major "$candidate/bin/java")"
    [ -n "$major" ] && [ "$major" -ge 25 ] && best="$candidate"
  fi
  if [ -z "$best" ]; then
    echo "box: no JDK 25 or newer found. Install one, for example Temurin 25," >&2
    echo "box: under /usr/lib/jvm, or set JAVA_HOME to it. The default java 17 cannot build Box." >&2
    return 1
  fi
  export JAVA_HOME="$best"
  export PATH="$JAVA_HOME/bin:$PATH"
}

# Installs with apt-get the Debian packages named, when running as root; otherwise prints the
# command to run and fails.
box_apt_install() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "box: missing: $*. Install with: sudo apt-get install -y $*" >&2
    return 1
  fi
  echo "box: installing $* with apt-get ..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# Makes sure bubblewrap, util-linux's nsenter/setpriv/unshare, slirp4netns and nftables (network-on
# sandboxes), Maven, iproute2 (the network escape tests build their stand-in network with it),
# what the build needs to compile box-guard statically: gcc, the C library's and libseccomp's
# static archives, shellcheck (the test phase checks every shell program with it), tmux (the test
# of box shell drives it in a terminal), Compose v2 (the image's end-to-end test), chromium (the
# preview-link browser test) and nsjail (the nsjail backend) are present.
box_ensure_tools() {
  local missing=() lib
  lib="/usr/lib/$(uname -m)-linux-gnu"
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
  { command -v nsenter >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 &&
    command -v unshare >/dev/null 2>&1; } || missing+=(util-linux)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  PATH="$PATH:/usr/sbin:/sbin" command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  PATH="$PATH:/usr/sbin:/sbin" command -v nft >/dev/null 2>&1 || missing+=(nftables)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  # kubectl renders deploy/kubernetes for the offline check of its manifests (no cluster).
  command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
  # mkfs.ext4 makes the file system of a private workspace with a quota (workspace_quota_mb).
  PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
  # The preview-link test opens a link in a real browser, headless.
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  [ -f "$lib/libc.a" ] || missing+=(libc6-dev)
  { [ -f "$lib/libseccomp.a" ] && [ -f /usr/include/seccomp.h ]; } || missing+=(libseccomp-dev)
  if [ "${#missing[@]}" -gt 0 ]; then
    box_apt_install "${missing[@]}"
  fi
  box_ensure_compose ||
    echo "box: Compose v2 is missing; the image's end-to-end test will be skipped" >&2
  box_ensure_nsjail
}

# Makes sure nsjail is installed: scripts/nsjail builds it once from its pinned source and caches
# it. Without it only the nsjail backend is unavailable (its tests are then skipped, and say so), so
# the script's one line saying why is all this prints.
box_ensure_nsjail() {
  "$(dirname "${BASH_SOURCE[0]}")/nsjail" >/dev/null || true
}

# Makes sure `docker compose` (Compose v2) works: LangBot's compose file nests defaults
# (${LANGBOT_BOX_ROOT:-${PWD}/data/box}), which Compose v1 (bookworm's docker-compose) cannot read.
# Bookworm has no Compose v2; Debian trixie's docker-compose package is that plugin, a static binary
# that needs only the C library. As root it is downloaded with apt-get from a source list of its own
# (the system's sources stay as they are) and its binary put where the docker CLI looks for plugins.
box_ensure_compose() {
  local plugin=/usr/local/lib/docker/cli-plugins/docker-compose apt_dir deb
  if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    return 0
  fi
  [ -x "$plugin" ] && "$plugin" version >/dev/null 2>&1 && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "box: missing: Compose v2 (docker compose). Install the docker-compose-plugin of your distribution." >&2
    return 1
  fi
  echo "box: installing Compose v2 (Debian trixie's docker-compose) as $plugin ..." >&2
  apt_dir="$(mktemp -d)"
  # apt-get downloads as the user _apt, who must be able to enter the directory.
  chmod 0755 "$apt_dir"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo 'deb http://deb.debian.org/debian trixie main' >"$apt_dir/sources.list"
  local opts=(-q -o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
  if (cd "$apt_dir" && apt-get "${opts[@]}" update >/dev/null &&
    apt-get "${opts[@]}" download 'docker-compose=2.*' >/dev/null 2>&1) &&
    deb="$(find "$apt_dir" -maxdepth 1 -name 'docker-compose_2*.deb' | head -n 1)" &&
    [ -n "$deb" ] &&
    dpkg-deb -x "$deb" "$apt_dir/root"; then
    mkdir -p "$(dirname "$plugin")"
    install -m 0755 "$apt_dir/root/usr/libexec/docker/cli-plugins/docker-compose" "$plugin"
  fi
  rm -rf "$apt_dir"
  "$plugin" version >/dev/null 2>&1 || {
    echo "box: could not install Compose v2 (docker compose)" >&2
    return 1
  }
}

# The JVM options Box runs with unless BOX_JAVA_OPTS says otherwise, measured with bench/footprint
# (docs/PERFORMANCE.md, "JVM footprint and start-up"). The JVM's defaults size the heap from the
# machine's RAM (a quarter of it at most, a 64th from the start) and use G1 and C2. Here the heap
# starts at 8 MiB and grows as needed up to about three times what the server's own bounded load
# keeps live (64 sessions at once, each exec returning 1 MiB of stdout and of stderr: up to 172 MiB
# after a collection); a full collection gives memory back; the serial collector has the smallest
# footprint; C1 alone compiles: the server mostly waits on processes and sockets, and C2 costs
# start-up CPU and memory. C1 compiles a method after a tenth of the JVM's default count of calls
# and loop turns: at the default an exec's path still ran partly in the interpreter after thousands
# of execs, at 1.5 times the CPU (docs/PERFORMANCE.md, "Compiling sooner, fewer cgroup operations
# an exec").
BOX_DEFAULT_JAVA_OPTS="-XX:+UseSerialGC -Xms8m -Xmx512m -XX:MinHeapFreeRatio=10 \
-XX:MaxHeapFreeRatio=30 -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 \
-XX:CompileThresholdScaling=0.1 -XX:+ExitOnOutOfMemoryError"

# Removes from the archive cache $1 the files being written (<archive>.<pid>.tmp and
# <archive>.<pid>.conf.tmp) that no living process names on its command line: the server that
# records the classes it uses, or its job that then writes the archive. One killed with SIGKILL, or
# whose job was killed with it, never finishes or keeps them. Also the class-data archives of
# earlier launchers (box-serve-*.jsa), which an AOT cache replaced.
box_java_cache_sweep() {
  local leftover
  for leftover in "$1"/box-serve-*.tmp "$1"/box-serve-*.jsa; do
    [ -e "$leftover" ] || continue
    grep -qsF -- "$leftover" /proc/[0-9]*/cmdline || rm -f "$leftover"
  done
}

# Runs the jar $1 with the arguments that follow (`exec`: the JVM takes this shell's pid, which is
# what LangBot and the tests signal). Its options are BOX_JAVA_OPTS if set (empty for the JVM's
# defaults), else BOX_DEFAULT_JAVA_OPTS; a Jetty setting (Jetty's MemoryUtils otherwise creates the
# platform MBean server, loading JMX and JFR, to learn how many references fit a cache line: 16
# with compressed references); and JVM output to stderr, never to stdout, which is LangBot's
# control channel under `box serve -s` (nor the class-data sharing notes about classes it cannot
# archive). JAVA_HOME must be set (box_pick_jdk).
#
# The server (`serve`, or LangBot's `box -s`) also gets an AOT cache (JDK 25, JEP 483/514: its
# classes loaded and linked ahead of time), unless BOX_JAVA_CACHE is `off`: kept in BOX_JAVA_CACHE
# (default $XDG_CACHE_HOME/box, else ~/.cache/box), named after the jar's path, size and
# modification time, the JDK and the options. When it does not exist yet, the JVM records the
# classes it uses as it exits (-XX:AOTMode=record), and a background job waiting for that exit
# writes the cache from that record (-XX:AOTMode=create, a few seconds, once) if the server ran at
# least BOX_JAVA_CACHE_AFTER seconds (default 10; a server that fails at start would record the few
# classes it loaded), keeps it if the JVM accepts it, and removes the caches of earlier builds of
# that jar. The job ignores the signals that end a server through its process group (Ctrl-C, `kill
# -- -PGID`, a closed terminal), and so do the tail it waits with and the JVM that writes the cache,
# which inherit that: a server stopped that way still gets its fast start next time. The client
# commands are short and load other classes: no cache.
box_java_exec() {
  local jar="$1" opts cache archive tmp conf name base
  shift
  opts="${BOX_JAVA_OPTS-$BOX_DEFAULT_JAVA_OPTS} -Dorg.eclipse.jetty.util.referencesPerCacheLine=16"
  opts="$opts -XX:+DisplayVMOutputToStderr -Xlog:disable -Xlog:all=warning,cds*=error,aot*=error:stderr"
  cache="${BOX_JAVA_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/box}"
  case "${1:-}" in
    serve | box | -s | --stdio-control) ;;
    *) cache=off ;;
  esac
  if [ "$cache" != off ] && mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
    box_java_cache_sweep "$cache"
    name="box-serve-$(printf '%s\n' "$jar" | cksum | cut -d ' ' -f 1)"
    archive="$cache/$name-$(printf '%s\n%s\n%s\n' "$(stat -c '%s %Y' "$jar")" "$JAVA_HOME" "$opts" |
      cksum | cut -d ' ' -f 1).aot"
    if [ -s "$archive" ]; then
      opts="$opts -XX:AOTCache=$archive"
    else
      # $$ is the pid the JVM will have. The job keeps none of LangBot's pipes open.
      tmp="$archive.$$.tmp"
      conf="$archive.$$.conf.tmp"
      base="$opts"
      opts="$opts -XX:AOTMode=record -XX:AOTConfiguration=$conf"
      (
        trap '' INT TERM HUP QUIT
        started="$(date +%s)"
        tail --pid=$$ -f /dev/null
        set -f
        # shellcheck disable=SC2086 # the options are words
        if [ $(($(date +%s) - started)) -ge "${BOX_JAVA_CACHE_AFTER:-10}" ] && [ -s "$conf" ] &&
          "$JAVA_HOME/bin/java" $base -XX:AOTMode=create -XX:AOTConfiguration="$conf" \
            -XX:AOTCache="$tmp" -cp "$jar" &&
          "$JAVA_HOME/bin/java" $base -XX:AOTMode=on -XX:AOTCache="$tmp" -cp "$jar" -version; then
          set +f # the caches of earlier builds of this jar are a pattern
          rm -f "$cache/$name"-*.aot
          mv -f "$tmp" "$archive"
        fi
        rm -f "$tmp" "$conf"
      ) </dev/null >/dev/null 2>&1 &
    fi
  fi
  set -f
  # shellcheck disable=SC2086 # the options are words
  exec "$JAVA_HOME/bin/java" $opts -jar "$jar" "$@"
}

# Makes sure the cache holds the source archive <cache>/<name>-<first 7 of commit>.tar.gz (one top
# directory, submodules included) and prints its path. Takes it, in order, from: the file the
# caller's variable names (the variable is named by $5), the cache itself, a `vendor` directory
# beside the clone or one level up (CI lays one there), else upstream's git repository at exactly
# the pinned commit (a full 40-character hash), fetched with its submodules: git checks every object
# it fetches against its hash, and the checkout is refused unless HEAD is that commit. Arguments
# after the fifth, `path=url`, replace the addresses of those submodules (a local mirror). Fails
# with one line saying where it looked.
#
# Usage: box_source_archive name commit url cache variable [submodule=url ...]
box_source_archive() {
  local name="$1" commit="$2" url="$3" cache="$4" variable="$5"
  shift 5
  local short="${commit:0:7}" archive="${!variable:-}" candidate work src pair
  local cached="$cache/$name-$short.tar.gz" clone
  clone="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if [[ ! "$commit" =~ ^[0-9a-f]{40}$ ]]; then
    echo "box: $name: the pinned commit must be a full 40-character hash, not '$commit'" >&2
    return 1
  fi
  mkdir -p "$cache"
  if [ -n "$archive" ]; then
    if [ ! -f "$archive" ]; then
      echo "box: $name: $variable names no file: $archive" >&2
      return 1
    fi
    if [ ! "$archive" -ef "$cached" ]; then
      cp "$archive" "$cached.tmp"
      mv "$cached.tmp" "$cached"
    fi
    printf '%s\n' "$cached"
    return 0
  fi
  [ -f "$cached" ] && { printf '%s\n' "$cached"; return 0; }
  for candidate in "$clone/../vendor/$name-$short.tar.gz" "$clone"/../*/vendor/"$name-$short.tar.gz"; do
    if [ -f "$candidate" ]; then
      cp "$candidate" "$cached.tmp"
      mv "$cached.tmp" "$cached"
      printf '%s\n' "$cached"
      return 0
    fi
  done
  command -v git >/dev/null 2>&1 || box_apt_install git >/dev/null || return 1
  work="$(mktemp -d)"
  src="$work/$name-$short"
  # Never a password prompt; file:// is allowed for a mirror the caller named.
  local git=(env GIT_TERMINAL_PROMPT=0 timeout 600 git -c advice.detachedHead=false
    -c protocol.file.allow=always -C "$src")
  mkdir -p "$src"
  if "${git[@]}" init -q && "${git[@]}" fetch -q --depth 1 "$url" "$commit" 2>"$work/err" &&
    "${git[@]}" checkout -q "$commit" 2>>"$work/err" &&
    [ "$("${git[@]}" rev-parse HEAD)" = "$commit" ] &&
    "${git[@]}" submodule -q init 2>>"$work/err"; then
    for pair in "$@"; do
      "${git[@]}" config "submodule.${pair%%=*}.url" "${pair#*=}"
    done
    if "${git[@]}" submodule -q update --recursive 2>>"$work/err"; then
      tar -czf "$cached.tmp" -C "$work" --exclude=.git "$name-$short"
      mv "$cached.tmp" "$cached"
      rm -rf "$work"
      printf '%s\n' "$cached"
      return 0
    fi
  fi
  echo "box: no $name source at $short: $variable unset, none in $cache or a vendor directory beside the clone, and $url failed: $(grep -v '^$' "$work/err" | tail -n 1)" >&2
  rm -rf "$work"
  return 1
}
