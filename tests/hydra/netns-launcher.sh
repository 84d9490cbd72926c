#!/bin/sh
# Hydra's launcher for emulated hosts (tests/topology.sh): mpiexec.hydra -launcher ssh
# -launcher-exec tests/hydra/netns-launcher.sh -hosts fy-p-n1,fy-p-n2 ... calls this as it would
# call ssh, `[-x] HOST COMMAND...`, and the command (Hydra's proxy) runs in the network
# namespace named HOST, with FERRY_HOST_ID=HOST so that ranks of different namespaces know they
# are on different hosts. Like ssh, the command words are joined and run by a shell.
while [ $# -gt 0 ]; do
  case $1 in
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "netns-launcher: usage: [-x] HOST COMMAND..." >&2; exit 2; }
host=$1
shift
exec ip netns exec "$host" env FERRY_HOST_ID="$host" sh -c "$*"
