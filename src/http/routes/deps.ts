import type { ServiceContext } from '../../operations/context.ts';

/** What every route plugin is given. */
export interface RouteDeps {
  ctx: ServiceContext;
}
