import { builder } from './builder.ts';
import './scalars.ts';
import './enums.ts';
import './event.ts';
import './group-code.ts';
import './room-pickup.ts';
import './shopping-view.ts';
import './hotel.ts';
import './reservation.ts';
import './attendee.ts';
import './question.ts';
import './custom-field.ts';
import './pickup.ts';

builder.queryType({ description: 'Reads of the reservation service, for one licensee.' });
builder.mutationType({ description: 'Writes to the reservation service, checked before anything is sent.' });

export const schema = builder.toSchema({ sortSchema: false });
