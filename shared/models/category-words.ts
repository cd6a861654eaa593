/**
 * Words people use for common categories of messages, beside the category's own name: a
 * classification step whose categories are bare names ("billing", "shipping", "returns") still
 * reads "I want my money back" as a return. General customer-service and sentiment vocabulary, not
 * any one dataset's; a category's description and examples add its own.
 */
export const CATEGORY_WORDS: Record<string, string> = {
  return: 'refund send back exchange money back replace replacement wrong item damaged',
  refund: 'money back reimburse reimbursement return chargeback',
  exchange: 'swap replace return different size',
  shipping: 'delivery deliver delivered parcel package track tracking courier arrive arrived dispatch shipped shipment late delay where is my order',
  delivery: 'shipping parcel package track tracking courier arrive arrived dispatch shipped late delay',
  order: 'purchase bought buy checkout cart',
  billing: 'charge charged invoice bill payment pay card subscription fee receipt overcharged price',
  payment: 'pay paid card charge charged invoice transaction declined',
  invoice: 'bill receipt billing charge',
  account: 'login log sign password username profile email locked',
  login: 'password sign log account locked',
  technical: 'error crash bug broken not working fails failure app website login install',
  support: 'help problem issue error not working',
  bug: 'error crash broken fails failure not working',
  cancel: 'cancellation stop terminate unsubscribe end close',
  cancellation: 'cancel stop terminate unsubscribe',
  complaint: 'unhappy angry terrible disappointed complain awful bad worst',
  sales: 'price pricing buy purchase quote discount offer plan demo',
  pricing: 'price cost quote discount plan how much',
  feedback: 'suggestion idea improve love great',
  positive: 'good great love excellent happy amazing wonderful thanks best',
  negative: 'bad terrible hate awful angry disappointed worst poor broken',
  neutral: 'okay fine average',
  urgent: 'asap immediately emergency now critical urgent',
  question: 'how what why when where can could',
  spam: 'winner prize free money click offer lottery',
  greeting: 'hello hi hey morning',
};
