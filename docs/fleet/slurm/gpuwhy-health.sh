#!/bin/bash
# Slurm node health check with gpuwhy (slurm.conf: HealthCheckProgram, Prolog or Epilog; see docs/fleet.md).
#
#   GPUWHY_LEVEL=1  NVML health alone, no CUDA context, under a second: every HealthCheckInterval,
#                   and as a Prolog before each job (the default)
#   GPUWHY_LEVEL=2  health and the quick measurements (seconds to a minute): as an Epilog, or from
#                   a nightly maintenance job, when the GPUs are free
#
# On a failed check (exit 1) or a GPU that cannot be read (exit 3, 4) the node is drained with gpuwhy's
# one-line reason; bad options (exit 2) drain nothing (they are this script's mistake, not the node's).
# The metrics go to node_exporter's textfile folder when it exists.
set -u
GPUWHY=${GPUWHY:-/opt/gpuwhy/bin/gpuwhy}
LEVEL=${GPUWHY_LEVEL:-1}
TEXTFILE_DIR=${GPUWHY_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
NODE=${SLURMD_NODENAME:-$(hostname -s)}

args=(check -i all --level "$LEVEL" --drain-reason)
if [ -d "$TEXTFILE_DIR" ]; then
    args+=(--textfile "$TEXTFILE_DIR/gpuwhy-check-level$LEVEL.prom")
fi

reason=$(timeout 300 "$GPUWHY" "${args[@]}" 2>/dev/null)
rc=$?
case $rc in
    0) exit 0 ;;
    1|3|4)
        [ -n "$reason" ] || reason="gpuwhy check -r$LEVEL: exit $rc"
        scontrol update nodename="$NODE" state=drain reason="$reason"
        exit 1 ;;
    124)
        scontrol update nodename="$NODE" state=drain reason="gpuwhy check -r$LEVEL: timed out after 300 s"
        exit 1 ;;
    *)
        echo "gpuwhy check exited $rc: not draining $NODE" >&2
        exit 0 ;;
esac
