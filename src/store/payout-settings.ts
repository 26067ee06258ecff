import type { Queryable } from './db.ts';
import type { Owner } from './transactions.ts';

export interface PayoutSettingsRow {
  merchant_id: string;
  livemode: boolean;
  method: 'mobile_money' | 'bank_transfer';
  phone: string | null;
  bank_code: string | null;
  account_number: string | null;
  schedule: 'instant' | 'daily';
  updated_at: Date;
}

export async function findPayoutSettings(q: Queryable, owner: Owner): Promise<PayoutSettingsRow | undefined> {
  const { rows } = await q.query<PayoutSettingsRow>(
    'SELECT * FROM payout_settings WHERE merchant_id = $1 AND livemode = $2',
    [owner.merchantId, owner.livemode],
  );
  return rows[0];
}

/** Replaces the environment's payout method and schedule (one row per merchant and environment). */
export async function savePayoutSettings(q: Queryable, row: PayoutSettingsRow): Promise<PayoutSettingsRow> {
  const { rows } = await q.query<PayoutSettingsRow>(
    `INSERT INTO payout_settings (merchant_id, livemode, method, phone, bank_code, account_number, schedule, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (merchant_id, livemode) DO UPDATE
       SET method = EXCLUDED.method, phone = EXCLUDED.phone, bank_code = EXCLUDED.bank_code,
           account_number = EXCLUDED.account_number, schedule = EXCLUDED.schedule, updated_at = EXCLUDED.updated_at
     RETURNING *`,
    [
      row.merchant_id,
      row.livemode,
      row.method,
      row.phone,
      row.bank_code,
      row.account_number,
      row.schedule,
      row.updated_at,
    ],
  );
  const saved = rows[0];
  if (!saved) throw new Error('payout settings were not saved');
  return saved;
}
