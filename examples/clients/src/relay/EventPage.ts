import { graphql } from 'relay-runtime';

graphql`
  query EventPageQuery($eventId: Int!) {
    event(eventId: $eventId) {
      ...Event_event
      hotels {
        ...Hotel_hotel
      }
      groupCodes {
        ...GroupCode_groupCode
      }
      questions {
        ...EventQuestion_question
      }
      customFields {
        ...CustomField_customField
      }
    }
  }
`;
