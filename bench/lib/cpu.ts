/** CPU accounting from /proc (Linux; undefined elsewhere): what a server and its database used. */
import { readFileSync } from 'node:fs';

/** User+system CPU seconds of a process so far. */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Summed over processes; undefined if any cannot be read (or there are none). */
export function totalCpuSeconds(pids: readonly number[]): number | undefined {
  let total = 0;
  for (const pid of pids) {
    const seconds = cpuSeconds(pid);
    if (seconds === undefined) return undefined;
    total += seconds;
  }
  return pids.length > 0 ? total : undefined;
}

/** CPU used between two readings, in percent of one core. */
export const percentOf = (before: number | undefined, after: number | undefined, seconds: number) =>
  before === undefined || after === undefined ? undefined : (100 * (after - before)) / seconds;

/** The machine's load averages (1, 5 and 15 minutes) as `uptime` shows them. */
export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '-';
  }
}
