# Helpers the test runners share (sourced by tests/run-c-tests.sh and tests/mcapi.sh).

# Whether case NAME is chosen by the runner's FILTER words (the array `filters`; none: all).
selected() {
    local name=$1 f
    [ ${#filters[@]} -eq 0 ] && return 0
    for f in "${filters[@]}"; do
        case "$name" in *"$f"*) return 0 ;; esac
    done
    return 1
}

# Nanoseconds since the epoch, for the time of a run.
now_ns() { date +%s%N; }

# The last lines of FILE, indented, under LABEL (nothing when FILE is empty).
show_tail() {
    local file=$1 label=$2
    if [ -s "$file" ]; then
        echo "    --- $label (last lines)"
        tail -n 15 "$file" | sed 's/^/    | /'
    fi
}
