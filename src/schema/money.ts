import { builder } from './builder.ts';
import { costsNothing } from './cost.ts';

export const Money = builder.objectRef<{ amount?: number | null; currency?: string | null }>('Money').implement({
  description: 'An amount of money.',
  // A value type other subgraphs may define too: any of them may resolve it.
  shareable: true,
  fields: (t) => ({
    amount: t.exposeFloat('amount', { nullable: true, description: 'The amount.', ...costsNothing }),
    currency: t.exposeString('currency', { nullable: true, description: 'ISO 4217 currency code.', ...costsNothing }),
  }),
});
