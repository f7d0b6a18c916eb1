import { graphql } from 'relay-runtime';

graphql`
  fragment Reservation_reservation on Reservation @refetchable(queryName: "ReservationRefetchQuery") {
    id
    reservationNumber
    status
    arrivalDate
    modifiedAt
    attendee {
      id
      ...Attendee_attendee
    }
  }
`;
