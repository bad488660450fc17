# Sourced by the side-by-side scripts (bench/tools/peers.sh, bench/tools/precisions.sh).

# device_info GPUMEM BACKEND:INDEX: the device's block of `GPUMEM info`:
# its line "  backend:N  name  [type]", then its facts ("    key  value");
# nothing when info lists no such device.
device_info() {
    "$1" info 2>/dev/null | awk -v dev="$2" '/^[^ ]/ || /^  [^ ]/ { on = $1 == dev } on'
}
