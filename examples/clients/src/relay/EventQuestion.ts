import { graphql } from 'relay-runtime';

graphql`
  fragment EventQuestion_question on EventQuestion @refetchable(queryName: "EventQuestionRefetchQuery") {
    id
    questionId
    question
    type
  }
`;
