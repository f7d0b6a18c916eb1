import { graphql } from 'relay-runtime';

graphql`
  fragment Attendee_attendee on Attendee @refetchable(queryName: "AttendeeRefetchQuery") {
    id
    attendeeId
    registrationEventId
  }
`;
