import { notFound } from '../domain/errors.ts';
import type { ListPayoutsFilter, PayoutLinesFilter, PayoutLineView, PayoutView } from '../schemas/payouts.ts';
import type { Queryable } from '../store/db.ts';
import {
  findPayout,
  firstLinesOf,
  listPayoutLines,
  listPayouts,
  type PayoutLineDetail,
} from '../store/payouts.ts';
import type { Owner } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { instant, type ListView, listView, pageFilterOf } from './list-view.ts';
import { LINES_IN_LISTS_AND_EVENTS, LINES_IN_PAYOUT, payoutLineView, payoutView } from './payout-view.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';

/** A payout of the caller's environment with its first lines (the rest: listPayoutLineViews). */
export async function payoutViewOf(q: Queryable, owner: Owner, id: string): Promise<PayoutView> {
  const payout = await findPayout(q, owner, id);
  if (!payout) throw notFound('payout', id);
  return payoutView(payout, await firstLinesOf(q, [id], LINES_IN_PAYOUT), LINES_IN_PAYOUT);
}

export async function getPayout(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<PayoutView> {
  return payoutViewOf(ctx.db, ownerOf(merchant), id);
}

export async function listPayoutViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  filter: ListPayoutsFilter,
): Promise<ListView<PayoutView>> {
  const { rows, hasMore } = await listPayouts(ctx.db, ownerOf(merchant), {
    ...pageFilterOf(filter),
    status: filter.status,
    createdGte: instant(filter['created[gte]'], 'created[gte]'),
    createdLt: instant(filter['created[lt]'], 'created[lt]'),
  });
  const lines = new Map<string, PayoutLineDetail[]>();
  for (const line of await firstLinesOf(
    ctx.db,
    rows.map((r) => r.id),
    LINES_IN_LISTS_AND_EVENTS,
  )) {
    const of = lines.get(line.payout_id);
    if (of) of.push(line);
    else lines.set(line.payout_id, [line]);
  }
  return listView(
    rows.map((row) => payoutView(row, lines.get(row.id) ?? [], LINES_IN_LISTS_AND_EVENTS)),
    hasMore,
  );
}

/** Every line of a payout, a page at a time, newest transaction first; cursors are transaction ids. */
export async function listPayoutLineViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
  filter: PayoutLinesFilter,
): Promise<ListView<PayoutLineView>> {
  const page = pageFilterOf(filter);
  const payout = await findPayout(ctx.db, ownerOf(merchant), id);
  if (!payout) throw notFound('payout', id);
  const { rows, hasMore } = await listPayoutLines(ctx.db, id, page);
  return listView(
    rows.map((line) => payoutLineView(line, payout.currency)),
    hasMore,
  );
}
