import { graphql } from 'relay-runtime';

graphql`
  fragment Hotel_hotel on Hotel @refetchable(queryName: "HotelRefetchQuery") {
    id
    hotelId
    name
    starRating
  }
`;
