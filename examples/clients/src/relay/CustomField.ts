import { graphql } from 'relay-runtime';

graphql`
  fragment CustomField_customField on CustomField @refetchable(queryName: "CustomFieldRefetchQuery") {
    id
    customFieldId
    name
    raw
  }
`;
