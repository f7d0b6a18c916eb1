/** The subscription both subscriber examples (graphql-ws, graphql-sse) run. */
export const RESERVATION_CHANGED = /* GraphQL */ `
  subscription ReservationChanged($eventId: Int!) {
    reservationChanged(eventId: $eventId) {
      kind
      modifiedAt
      reservation { id reservationNumber status customFieldValues { customFieldId name value } }
    }
  }
`;

export const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);
