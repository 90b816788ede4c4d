# slurmctl.sh - a throwaway single-node Slurm for the fleet suite (source it).
#   slurm_start DIR   a private munged (own key and socket) and slurmctld +
#                     slurmd with a generated config, all under DIR; exports
#                     SLURM_CONF; returns 1 and sets SLURM_WHY when it cannot
#   slurm_stop        stop the daemons and remove DIR
# Nothing outside DIR is touched (no /etc/munge, no /run/munge); facts from
# spec/fleet-notes.md.
SLURM_DIR=
slurm_start() {
	SLURM_DIR=$1
	local d=$1 h port i
	for c in munged munge slurmctld slurmd sbatch squeue sinfo; do
		command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 || {
			SLURM_WHY="no $c (Debian packages slurmctld slurmd slurm-client munge; make deps installs them)"
			return 1
		}
	done
	PATH=$PATH:/usr/sbin
	if [ "$(id -u)" != 0 ]; then
		SLURM_WHY="the single-node Slurm test runs the daemons as root"
		return 1
	fi
	id munge >/dev/null 2>&1 || { SLURM_WHY="no munge user"; return 1; }
	mkdir -p "$d/munge" "$d/msock" "$d/state" "$d/spool"
	chmod 755 "$d"
	chown munge:munge "$d/munge" "$d/msock"
	chmod 700 "$d/munge"
	chmod 755 "$d/msock"
	head -c 1024 /dev/urandom >"$d/munge/munge.key"
	chown munge:munge "$d/munge/munge.key"
	chmod 400 "$d/munge/munge.key"
	runuser -u munge -- munged --key-file="$d/munge/munge.key" --socket="$d/msock/munge.sock" \
		--pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
		--seed-file="$d/munge/munged.seed" ||
		{ SLURM_WHY="munged did not start: $(tail -1 "$d/munge/munged.log" 2>/dev/null)"; return 1; }
	munge -S "$d/msock/munge.sock" -n | unmunge -S "$d/msock/munge.sock" | grep -q "STATUS: *Success" ||
		{ SLURM_WHY="munge credentials do not round-trip"; return 1; }
	h=$(hostname -s)
	# two free TCP ports next to each other
	port=$(python3 -c 'import socket
for p in range(36000, 40000, 2):
    try:
        a = socket.socket(); a.bind(("", p)); b = socket.socket(); b.bind(("", p + 1))
        a.close(); b.close(); print(p); break
    except OSError:
        pass')
	cat >"$d/slurm.conf" <<CONF
ClusterName=tfdtest
SlurmctldHost=$h
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/msock/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
ReturnToService=2
NodeName=$h CPUs=$(nproc) State=UNKNOWN
PartitionName=tfd Nodes=$h Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$d/slurm.conf
	slurmctld -c -f "$SLURM_CONF" || { SLURM_WHY="slurmctld did not start"; return 1; }
	slurmd -f "$SLURM_CONF" || { SLURM_WHY="slurmd did not start"; return 1; }
	for i in $(seq 1 60); do
		sinfo -h -o %t 2>/dev/null | grep -q idle && return 0
		sleep 0.5
	done
	SLURM_WHY="the node never became idle: $(tail -2 "$d/slurmctld.log" | tr '\n' ' ')"
	return 1
}
slurm_stop() {
	local d=$SLURM_DIR p
	[ -n "$d" ] || return 0
	for p in slurmd slurmctld munge/munged; do
		[ -f "$d/$p.pid" ] && kill "$(cat "$d/$p.pid" 2>/dev/null)" 2>/dev/null
	done
	for p in slurmd slurmctld munge/munged; do
		for _ in $(seq 1 50); do
			[ -f "$d/$p.pid" ] && kill -0 "$(cat "$d/$p.pid" 2>/dev/null)" 2>/dev/null || break
			sleep 0.1
		done
	done
	rm -rf "$d"
	SLURM_DIR=
}
