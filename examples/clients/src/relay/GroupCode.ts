import { graphql } from 'relay-runtime';

graphql`
  fragment GroupCode_groupCode on GroupCode @refetchable(queryName: "GroupCodeRefetchQuery") {
    id
    code
    name
    rooms
    startDate
    endDate
  }
`;
