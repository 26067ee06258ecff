-- The transaction object shows its latest payment attempt (failed, cancelled and timed-out ones
-- stay visible); a summary kept on the row avoids a join on every read.
ALTER TABLE transactions ADD COLUMN last_payment_attempt jsonb;
