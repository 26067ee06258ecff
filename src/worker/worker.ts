import type { FastifyBaseLogger } from 'fastify';
import type { ServiceContext } from '../operations/context.ts';
import { runDueJobs } from './run-due-jobs.ts';
import { startWebhookDispatcher } from './webhook-dispatcher.ts';

export interface Worker {
  /** Stops polling and waits for the round in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Polls the jobs table and runs what is due. Runs inside the server process by default and alone
 * with `safehold serve --role worker`; any number of workers can run against one database.
 */
export function startWorker(
  ctx: ServiceContext,
  options: { intervalMs?: number; logger: Pick<FastifyBaseLogger, 'error' | 'debug'> },
): Worker {
  const intervalMs = options.intervalMs ?? 500;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const tick = () => {
    round = (async () => {
      try {
        const ran = await runDueJobs(ctx);
        if (ran > 0) options.logger.debug({ ran }, 'worker ran due jobs');
      } catch (error) {
        options.logger.error({ err: error }, 'worker round failed; retrying next round');
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    })();
  };
  tick();
  // Webhooks run beside the jobs, in their own loop, so a slow receiver never holds up a deadline.
  const webhooks = startWebhookDispatcher(ctx, { logger: options.logger });
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([round, webhooks.stop()]);
    },
  };
}
