import { attendeeRoutes } from './handlers/attendees.ts';
import { customFieldRoutes } from './handlers/custom-fields.ts';
import { eventRoutes } from './handlers/events.ts';
import { hotelRoutes } from './handlers/hotels.ts';
import { questionRoutes } from './handlers/questions.ts';
import { reservationRoutes } from './handlers/reservations.ts';
import { ServiceError } from './params.ts';
import { type Route, V101_UP } from './route.ts';

/** Present in v102 and v101, checked and counted like every endpoint, then 410 (docs/upstream.md, "Errors"). */
const mailingListRoutes: Route[] = ['postmailinglistoptin', 'getmailinglistoptin', 'getmailinglistoptinpagecount'].map(
  (name) => ({
    name,
    versions: V101_UP,
    params: {},
    handle() {
      throw new ServiceError(
        410,
        'FEATURE_UNAVAILABLE',
        'The mailing list opt-in function is unavailable for data-protection reasons',
      );
    },
  }),
);

/** Every endpoint of the service, by name. `authenticate` is handled by the server itself. */
export const ROUTES: ReadonlyMap<string, Route> = new Map(
  [
    ...eventRoutes,
    ...hotelRoutes,
    ...reservationRoutes,
    ...questionRoutes,
    ...customFieldRoutes,
    ...attendeeRoutes,
    ...mailingListRoutes,
  ].map((r) => [r.name, r]),
);
