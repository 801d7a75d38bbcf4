#!/usr/bin/env bash
# build-kernel-image.sh: build a kernel image folder for `python -m rcusim kernel --kernel DIR`
# from a kernel source tree (Debian's linux-source tarball extracted, or a git tree).
#
#   build-kernel-image.sh KERNEL_TREE OUT_DIR [--hz 1000|250|300|100] [--jobs N]
#                         [--build-dir DIR] [--trim] [--fragment FILE]... [--config-only]
#
# It does what ../shared/KERNEL-TWIN.md's recipe does: x86_64_defconfig, kvm_guest.config,
# this folder's rcusim.config fragment (merged with scripts/kconfig/merge_config.sh), the
# chosen HZ, olddefconfig; then it checks that the .config kept every option of the
# fragment (exit 1 naming those it lost), builds bzImage and modules and writes OUT_DIR:
#
#   OUT_DIR/bzImage  OUT_DIR/config (the .config)  OUT_DIR/System.map
#   OUT_DIR/modules/{torture,rcuscale,rcutorture,test_vmalloc}.ko  (strip --strip-debug)
#   OUT_DIR/build-info.txt  (what was built, from where, with which options)
#
# Run it under `nice -n 19` on a shared machine; a full build takes ~22 min on 2 cores.
set -eu
set -o pipefail

PROG=build-kernel-image.sh
HERE=$(cd "$(dirname "$0")" && pwd)
FRAGMENT="$HERE/rcusim.config"
MODULES="torture rcuscale rcutorture test_vmalloc"

usage() {
	cat <<EOF
usage: $PROG KERNEL_TREE OUT_DIR [options]

Build an image folder for 'python -m rcusim kernel --kernel OUT_DIR' from KERNEL_TREE.

options:
  --hz N           the kernel's HZ: 1000, 250, 300 or 100 (default: 1000); one image per HZ
  --jobs N         make -jN (default: the number of CPUs, $(nproc 2>/dev/null || echo 1))
  --build-dir DIR  where objects go (make O=DIR; default: KERNEL_TREE/build-rcusim);
                   give KERNEL_TREE itself to build in place
  --trim           also turn off drivers, file systems and protocols a QEMU guest never
                   uses (DRM, sound, USB, wireless, ethernet, netfilter, ...): a much
                   faster build; the RCU paths are the same, the kernel is not the recipe's
  --fragment FILE  merge another Kconfig fragment after rcusim.config (repeatable); its
                   options are checked like rcusim.config's
  --config-only    stop after the configuration and its check (nothing is built or written)
  -h, --help       this help

needs: make, gcc, flex, bison, bc, cpio, strip, libelf-dev, libssl-dev
EOF
}

die() {
	echo "$PROG: error: $*" >&2
	exit 1
}

usage_error() {
	echo "$PROG: error: $*" >&2
	echo "run '$PROG --help' for the usage" >&2
	exit 2
}

# ------------------------------------------------------------------ arguments
HZ=1000
JOBS=$(nproc 2>/dev/null || echo 1)
BUILD=
TRIM=0
CONFIG_ONLY=0
EXTRA_FRAGMENTS=()
POSITIONAL=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--hz) [ $# -ge 2 ] || usage_error "--hz needs a value"; HZ=$2; shift 2 ;;
	--hz=*) HZ=${1#--hz=}; shift ;;
	--jobs | -j) [ $# -ge 2 ] || usage_error "--jobs needs a value"; JOBS=$2; shift 2 ;;
	--jobs=*) JOBS=${1#--jobs=}; shift ;;
	--build-dir) [ $# -ge 2 ] || usage_error "--build-dir needs a value"; BUILD=$2; shift 2 ;;
	--build-dir=*) BUILD=${1#--build-dir=}; shift ;;
	--fragment) [ $# -ge 2 ] || usage_error "--fragment needs a file"; EXTRA_FRAGMENTS+=("$2"); shift 2 ;;
	--fragment=*) EXTRA_FRAGMENTS+=("${1#--fragment=}"); shift ;;
	--trim) TRIM=1; shift ;;
	--config-only) CONFIG_ONLY=1; shift ;;
	--) shift; POSITIONAL+=("$@"); break ;;
	-*) usage_error "unknown option $1" ;;
	*) POSITIONAL+=("$1"); shift ;;
	esac
done
[ ${#POSITIONAL[@]} -eq 2 ] || usage_error "expected KERNEL_TREE and OUT_DIR, got ${#POSITIONAL[@]} argument(s)"
TREE=${POSITIONAL[0]}
OUT=${POSITIONAL[1]}

case "$HZ" in
100 | 250 | 300 | 1000) ;;
*) usage_error "--hz $HZ: the kernel offers HZ 100, 250, 300 or 1000" ;;
esac
case "$JOBS" in
'' | *[!0-9]* | 0) usage_error "--jobs $JOBS: a positive integer" ;;
esac

# ------------------------------------------------------------------ the tree and the tools
[ -d "$TREE" ] || die "no kernel tree at '$TREE' (extract one, e.g. tar xf /usr/src/linux-source-6.12.tar.xz)"
TREE=$(cd "$TREE" && pwd -P)
for f in Makefile Kconfig scripts/kconfig/merge_config.sh arch/x86/configs/x86_64_defconfig; do
	[ -e "$TREE/$f" ] || die "'$TREE' is not a Linux source tree with x86 support: $f is missing"
done
[ -e "$TREE/kernel/configs/kvm_guest.config" ] || [ -e "$TREE/arch/x86/configs/kvm_guest.config" ] ||
	die "'$TREE' has no kvm_guest.config (kernel/configs/ or arch/x86/configs/): too old a tree?"
[ -r "$FRAGMENT" ] || die "the fragment $FRAGMENT is missing (it ships beside this script)"
for f in ${EXTRA_FRAGMENTS[@]+"${EXTRA_FRAGMENTS[@]}"}; do
	[ -r "$f" ] || die "--fragment $f: no such readable file"
done

missing=()
for tool in make gcc flex bison bc cpio strip perl realpath; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
HOSTCC=gcc
if command -v "$HOSTCC" >/dev/null 2>&1; then
	printf '#include <gelf.h>\n' | "$HOSTCC" -E -x c - >/dev/null 2>&1 || missing+=("libelf-dev (gelf.h)")
	printf '#include <openssl/evp.h>\n' | "$HOSTCC" -E -x c - >/dev/null 2>&1 || missing+=("libssl-dev (openssl/evp.h)")
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "$PROG: error: missing build tools: ${missing[*]}" >&2
	echo "  on Debian: apt-get install make gcc flex bison bc cpio binutils perl libelf-dev libssl-dev" >&2
	exit 1
fi

# ------------------------------------------------------------------ where objects go
[ -n "$BUILD" ] || BUILD="$TREE/build-rcusim"
BUILD=$(realpath -m -- "$BUILD")
OUT_ABS=$(realpath -m -- "$OUT")
case "$OUT_ABS" in
"$BUILD" | "$BUILD"/* | "$TREE") die "OUT_DIR '$OUT' is inside the build folder or is the tree: choose another" ;;
esac
# OUT_DIR is replaced only when it is new, empty or an image folder (nothing else is removed).
IMAGE_FILES="bzImage config System.map modules build-info.txt"
if [ -e "$OUT" ]; then
	[ -d "$OUT" ] || die "OUT_DIR '$OUT' exists and is not a folder"
	for entry in "$OUT"/* "$OUT"/.[!.]*; do
		[ -e "$entry" ] || continue
		case " $IMAGE_FILES " in
		*" $(basename "$entry") "*) ;;
		*) die "OUT_DIR '$OUT' holds $(basename "$entry"), not only an image: choose a new or empty folder" ;;
		esac
	done
fi
if [ "$BUILD" = "$TREE" ]; then
	O_ARG=()
else
	O_ARG=("O=$BUILD")
	if [ -e "$TREE/.config" ] || [ -d "$TREE/include/config" ]; then
		die "'$TREE' was configured in place (it has .config or include/config/): build there with" \
			"--build-dir '$TREE', or clean it with 'make -C $TREE mrproper'"
	fi
fi
mkdir -p "$BUILD" || die "cannot create the build folder $BUILD"

kmake() {
	make -C "$TREE" ${O_ARG[@]+"${O_ARG[@]}"} ARCH=x86 "$@"
}

VERSION=$(kmake -s kernelversion 2>/dev/null | tail -n 1) || VERSION=unknown
echo "$PROG: Linux $VERSION from $TREE, HZ=$HZ, objects in $BUILD"

# ------------------------------------------------------------------ configuration
kmake x86_64_defconfig
kmake kvm_guest.config

HZ_FRAGMENT="$BUILD/rcusim-hz.config"
{
	echo "# HZ=$HZ, written by $PROG --hz"
	for n in 100 250 300 1000; do
		if [ "$n" = "$HZ" ]; then echo "CONFIG_HZ_$n=y"; else echo "# CONFIG_HZ_$n is not set"; fi
	done
} >"$HZ_FRAGMENT"

TRIM_FRAGMENT="$BUILD/rcusim-trim.config"
cat >"$TRIM_FRAGMENT" <<'EOF'
# --trim: what a QEMU guest with an initramfs, a serial console and a 9p share never uses.
# CONFIG_DRM is not set
# CONFIG_AGP is not set
# CONFIG_SOUND is not set
# CONFIG_USB_SUPPORT is not set
# CONFIG_HID is not set
# CONFIG_WIRELESS is not set
# CONFIG_WLAN is not set
# CONFIG_CFG80211 is not set
# CONFIG_MAC80211 is not set
# CONFIG_RFKILL is not set
# CONFIG_ETHERNET is not set
# CONFIG_VIRTIO_NET is not set
# CONFIG_VIRTIO_BLK is not set
# CONFIG_VIRTIO_INPUT is not set
# CONFIG_NETFILTER is not set
# CONFIG_IPV6 is not set
# CONFIG_NET_SCHED is not set
# CONFIG_ATA is not set
# CONFIG_SCSI is not set
# CONFIG_MD is not set
# CONFIG_PCCARD is not set
# CONFIG_MACINTOSH_DRIVERS is not set
# CONFIG_X86_PLATFORM_DEVICES is not set
# CONFIG_INPUT_JOYSTICK is not set
# CONFIG_INPUT_TABLET is not set
# CONFIG_INPUT_TOUCHSCREEN is not set
# CONFIG_NFS_FS is not set
# CONFIG_EXT4_FS is not set
# CONFIG_ISO9660_FS is not set
# CONFIG_MSDOS_FS is not set
# CONFIG_VFAT_FS is not set
# CONFIG_AUTOFS_FS is not set
# CONFIG_QUOTA is not set
EOF

FRAGMENTS=("$FRAGMENT" "$HZ_FRAGMENT")
[ "$TRIM" = 1 ] && FRAGMENTS+=("$TRIM_FRAGMENT")
FRAGMENTS+=(${EXTRA_FRAGMENTS[@]+"${EXTRA_FRAGMENTS[@]}"})
# merge_config.sh makes its temporary files in the current folder: run it in the build folder.
(cd "$BUILD" && sh "$TREE/scripts/kconfig/merge_config.sh" -m .config "${FRAGMENTS[@]}") >"$BUILD/rcusim-merge.log" ||
	die "merge_config.sh failed (see $BUILD/rcusim-merge.log)"
kmake olddefconfig

# ------------------------------------------------------------------ the check
# Each "CONFIG_X=v" line of a checked fragment must be in the .config as it is; each
# "# CONFIG_X is not set" must not be set there (a symbol the tree lacks counts as unset).
CONFIG="$BUILD/.config"
check_fragment() { # FRAGMENT -> prints "  wanted (the .config has: ...)" for each option lost
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1 set \2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 unset -/p' "$1" |
		while read -r sym how value; do
			have=$(grep -E "^$sym=|^# $sym is not set\$" "$CONFIG" || true)
			if [ "$how" = set ]; then
				[ "$have" = "$sym=$value" ] || echo "  $sym=$value (the .config has: ${have:-nothing, the symbol is unknown or its dependencies are off})"
			else
				case "$have" in
				"$sym="*) echo "  # $sym is not set (the .config has: $have)" ;;
				esac
			fi
		done
}
lost=
for f in "$FRAGMENT" "$HZ_FRAGMENT" ${EXTRA_FRAGMENTS[@]+"${EXTRA_FRAGMENTS[@]}"}; do
	out=$(check_fragment "$f")
	[ -z "$out" ] || lost="$lost$(basename "$f"):"$'\n'"$out"$'\n'
done
grep -qx "CONFIG_HZ=$HZ" "$CONFIG" || lost="${lost}HZ:"$'\n'"  CONFIG_HZ=$HZ (the .config has: $(grep '^CONFIG_HZ=' "$CONFIG" || echo nothing))"$'\n'
if [ -n "$lost" ]; then
	echo "$PROG: error: the .config ($CONFIG) lost options the image needs:" >&2
	printf '%s' "$lost" >&2
	exit 1
fi
if [ "$TRIM" = 1 ]; then
	out=$(check_fragment "$TRIM_FRAGMENT")
	[ -z "$out" ] || printf '%s: note: --trim options that did not take (harmless):\n%s\n' "$PROG" "$out"
fi
echo "$PROG: the .config has every option of $(basename "$FRAGMENT") and HZ=$HZ ($CONFIG)"
if [ "$CONFIG_ONLY" = 1 ]; then
	echo "$PROG: --config-only: stopping before the build"
	exit 0
fi

# ------------------------------------------------------------------ build
kmake -j"$JOBS" bzImage modules

# ------------------------------------------------------------------ the image folder
mkdir -p "$(dirname "$OUT")"
STAGE=$(mktemp -d "${OUT%/}.tmp.XXXXXX") || die "cannot create a folder beside '$OUT'"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/modules"
cp "$BUILD/arch/x86/boot/bzImage" "$STAGE/bzImage"
cp "$CONFIG" "$STAGE/config"
cp "$BUILD/System.map" "$STAGE/System.map"
for m in $MODULES; do
	ko=$(find "$BUILD" -name "$m.ko" -type f ! -path "$STAGE/*" | head -n 1)
	[ -n "$ko" ] || die "the build made no $m.ko (is it =m in $CONFIG?)"
	strip --strip-debug -o "$STAGE/modules/$m.ko" "$ko"
done
{
	echo "built by: $PROG"
	echo "tree: $TREE"
	echo "version: $VERSION ($(kmake -s kernelrelease 2>/dev/null | tail -n 1))"
	echo "HZ: $HZ"
	echo "trim: $([ "$TRIM" = 1 ] && echo yes || echo no)"
	echo "fragments: ${FRAGMENTS[*]}"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$STAGE/build-info.txt"
chmod 755 "$STAGE"
if [ -e "$OUT" ]; then
	for entry in $IMAGE_FILES; do rm -rf "${OUT:?}/$entry"; done
	rmdir "$OUT" || die "cannot replace '$OUT'"
fi
mv "$STAGE" "$OUT"
trap - EXIT
echo "$PROG: image written to $OUT (Linux $VERSION, HZ=$HZ)"
echo "  use it with: python -m rcusim kernel SCENARIO --kernel $OUT"
