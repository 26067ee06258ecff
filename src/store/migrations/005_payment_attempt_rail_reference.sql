-- A rail's callback names its attempt by the rail's own reference (Daraja's CheckoutRequestID).
CREATE INDEX payment_attempts_rail_reference ON payment_attempts (rail_reference)
  WHERE rail_reference IS NOT NULL;
