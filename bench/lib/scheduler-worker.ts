/**
 * One scheduler worker process for bench/scheduler.ts. It opens the service's context on
 * DATABASE_URL exactly as `safehold serve --role worker` does, says 'ready' over IPC, waits for
 * 'go', runs runDueJobs(ctx, {}, BENCH_BATCH_SIZE) until nothing is due, and reports how many jobs
 * it ran, how long it took and the CPU it used. Its database connection stays open until 'stop', so
 * the runner can read the backend's CPU after every worker has finished.
 */
import { openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { runDueJobs } from '../../src/worker/run-due-jobs.ts';

export interface WorkerReport {
  ran: number;
  ms: number;
  /** User+system CPU of this process while it ran, in milliseconds. */
  cpuMs: number;
}

const batchSize = Number(process.env.BENCH_BATCH_SIZE ?? 500);
const ctx = await openContext(loadConfig(process.env));
// Connect the pool before the clock starts.
await ctx.db.query('SELECT 1');

const send = (message: unknown) =>
  new Promise<void>((ok, fail) =>
    process.send?.(message, (error: Error | null) => (error ? fail(error) : ok())),
  );

process.on('message', (message) => {
  if (message === 'stop') {
    void ctx.db.close().finally(() => process.disconnect());
    return;
  }
  if (message !== 'go') return;
  void (async () => {
    try {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const ran = await runDueJobs(ctx, {}, batchSize);
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const report: WorkerReport = { ran, ms, cpuMs: (used.user + used.system) / 1000 };
      await send({ report });
    } catch (error) {
      await send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  })();
});
await send('ready');
