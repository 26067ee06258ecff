import { invalid, notFound } from '../domain/errors.ts';
import type { ListTransactionsFilter, TransactionView } from '../schemas/transaction.ts';
import { findTransaction, listTransactions } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import type { MerchantPrincipal } from './principal.ts';
import { transactionView } from './transaction-view.ts';

const ownerOf = (m: MerchantPrincipal) => ({ merchantId: m.merchantId, livemode: m.livemode });

/** The schema's date-time format admits forms Date cannot read (a leap second: 23:59:60). */
function instant(text: string | undefined, param: string): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw invalid(param, `${param} must be a valid date-time.`);
  return date;
}

export async function getTransaction(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  id: string,
): Promise<TransactionView> {
  const row = await findTransaction(ctx.db, ownerOf(merchant), id);
  if (!row) throw notFound('transaction', id);
  return transactionView(ctx, row);
}

export async function listTransactionViews(
  ctx: ServiceContext,
  merchant: MerchantPrincipal,
  filter: ListTransactionsFilter,
): Promise<{ object: 'list'; data: TransactionView[]; has_more: boolean }> {
  if (filter.starting_after !== undefined && filter.ending_before !== undefined) {
    throw invalid(
      'ending_before',
      'Give starting_after or ending_before, not both: they page in opposite directions.',
    );
  }
  const { rows, hasMore } = await listTransactions(ctx.db, ownerOf(merchant), {
    limit: filter.limit ?? 20,
    startingAfter: filter.starting_after,
    endingBefore: filter.ending_before,
    status: filter.status,
    merchantReference: filter.merchant_reference,
    merchantOrderId: filter.merchant_order_id,
    createdGte: instant(filter['created[gte]'], 'created[gte]'),
    createdLt: instant(filter['created[lt]'], 'created[lt]'),
  });
  return { object: 'list', data: rows.map((row) => transactionView(ctx, row)), has_more: hasMore };
}
