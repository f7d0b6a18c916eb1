import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * Whether a delivery verifies as a receiver verifies it: the `standardwebhooks` package's
 * `Webhook#verify` on the raw body and the headers as received (its 5-minute tolerance against
 * `Date.now()`, the fake clock's where a test fakes `Date`).
 */
export function verifies(secret: string, headers: Record<string, string | undefined>, body: string): boolean {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>, { jsonParse: false });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}
