import type { CollectionResult } from './collection.ts';

/**
 * Daraja's STK Push callback: `{"Body": {"stkCallback": {MerchantRequestID, CheckoutRequestID,
 * ResultCode, ResultDesc, CallbackMetadata?: {Item: [{Name, Value}]}}}}`. ResultCode 0 is a
 * payment (with MpesaReceiptNumber, Amount, TransactionDate, PhoneNumber in the metadata);
 * anything else is a failure.
 */
export interface StkCallback {
  merchantRequestId: string;
  /** The push's id, recorded as the attempt's rail_reference when the push was accepted. */
  checkoutRequestId: string;
  resultCode: number;
  resultDesc: string;
  /** M-Pesa's receipt number of a successful payment, for reconciliation. */
  receipt?: string;
  /** Whole shillings paid, as M-Pesa reports it. */
  amount?: number;
}

/**
 * M-Pesa result codes with failure codes of their own, the same codes and words as the test
 * simulator's (1037, no answer from the handset, is the service's own timeout failure).
 */
export const MPESA_RESULT_FAILURES: Record<number, { code: string; message: string }> = {
  1: { code: 'insufficient_funds', message: 'The balance is insufficient for the transaction (M-Pesa 1).' },
  1032: {
    code: 'cancelled_by_user',
    message: 'The buyer cancelled the payment on the phone (M-Pesa 1032).',
  },
  1037: { code: 'timeout', message: 'The phone did not answer the payment request in time (M-Pesa 1037).' },
  2001: { code: 'wrong_pin', message: 'The PIN entered was wrong (M-Pesa 2001).' },
};

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function metadataItem(callback: Record<string, unknown>, name: string): unknown {
  const items = record(callback.CallbackMetadata)?.Item;
  if (!Array.isArray(items)) return undefined;
  return items.map(record).find((item) => item?.Name === name)?.Value;
}

/** The callback in a request body, or undefined when the body is not an STK Push callback. */
export function parseStkCallback(body: unknown): StkCallback | undefined {
  const callback = record(record(record(body)?.Body)?.stkCallback);
  if (!callback) return undefined;
  const { MerchantRequestID, CheckoutRequestID, ResultCode, ResultDesc } = callback;
  const resultCode =
    typeof ResultCode === 'string' && /^\d+$/.test(ResultCode) ? Number(ResultCode) : ResultCode;
  if (typeof CheckoutRequestID !== 'string' || CheckoutRequestID === '') return undefined;
  if (typeof resultCode !== 'number' || !Number.isInteger(resultCode)) return undefined;
  const receipt = metadataItem(callback, 'MpesaReceiptNumber');
  const amount = metadataItem(callback, 'Amount');
  return {
    merchantRequestId: typeof MerchantRequestID === 'string' ? MerchantRequestID : '',
    checkoutRequestId: CheckoutRequestID,
    resultCode,
    resultDesc: typeof ResultDesc === 'string' ? ResultDesc : '',
    ...(typeof receipt === 'string' ? { receipt } : {}),
    ...(typeof amount === 'number' ? { amount } : {}),
  };
}

/** The attempt's result: ResultCode 0 captures; the others fail with the simulator's codes. */
export function collectionResultOf(callback: StkCallback, attemptId: string): CollectionResult {
  // The attempt keeps the CheckoutRequestID as its rail reference (the receipt is logged), so a
  // repeated callback still finds it.
  if (callback.resultCode === 0) return { attemptId, outcome: 'succeeded' };
  const known = MPESA_RESULT_FAILURES[callback.resultCode];
  if (known) return { attemptId, outcome: 'failed', ...known };
  const desc =
    callback.resultDesc.trim().slice(0, 200).replace(/\.$/, '') || 'The payment did not go through';
  return {
    attemptId,
    outcome: 'failed',
    code: 'rail_error',
    message: `${desc} (M-Pesa ${callback.resultCode}).`,
  };
}
