import { builder } from './builder.ts';
import { shareable } from './federation.ts';

export const Money = builder.objectRef<{ amount?: number | null; currency?: string | null }>('Money').implement({
  description: 'An amount of money.',
  extensions: shareable,
  fields: (t) => ({
    amount: t.exposeFloat('amount', { nullable: true, description: 'The amount.' }),
    currency: t.exposeString('currency', { nullable: true, description: 'ISO 4217 currency code.' }),
  }),
});

