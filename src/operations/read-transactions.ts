import { notFound } from '../domain/errors.ts';
import type { ListTransactionsFilter, TransactionView } from '../schemas/transaction.ts';
import { findTransaction, listTransactions } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { instant, type ListView, listView, pageFilterOf } from './list-view.ts';
import { type MerchantPrincipal, ownerOf } from './principal.ts';
import { transactionView } from './transaction-view.ts';

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
): Promise<ListView<TransactionView>> {
  const { rows, hasMore } = await listTransactions(ctx.db, ownerOf(merchant), {
    ...pageFilterOf(filter),
    status: filter.status,
    merchantReference: filter.merchant_reference,
    merchantOrderId: filter.merchant_order_id,
    createdGte: instant(filter['created[gte]'], 'created[gte]'),
    createdLt: instant(filter['created[lt]'], 'created[lt]'),
  });
  return listView(
    rows.map((row) => transactionView(ctx, row)),
    hasMore,
  );
}
