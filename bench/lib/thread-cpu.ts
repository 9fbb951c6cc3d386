// CPU time of another process's main thread (the one that answers requests), from
// /proc/<pid>/task/<pid>/stat: user + system, in ms (the kernel counts in clock ticks, 10 ms).
// Unlike throughput, it does not move with whatever else loads the machine, and it leaves out
// the process's other threads (the audit trail's writer, libuv's pool).
import fs from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

export function mainThreadCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
