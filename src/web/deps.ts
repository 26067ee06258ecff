import type { ServiceContext } from '../operations/context.ts';

/** What the web route plugins are given. */
export interface WebDeps {
  ctx: ServiceContext;
}
