import { describe, expect, it } from 'vitest';
import { fillArguments } from '../shared/models/argument-filling';
import { decideToolCall } from '../shared/models/local-tools';
import type { ChatRequest, ToolSpec } from '../shared/models/types';

/**
 * The built-in engine's tool calls, read from sentences as people write them: one test per kind of
 * argument, and the wrong calls it used to make kept as regressions (a wrong call is worse than a
 * question).
 */
const tool = (name: string, description: string, properties: Record<string, unknown>, required: string[] = Object.keys(properties)): ToolSpec => ({
  name,
  description,
  parameters: { type: 'object', properties, required },
});
const ask = (message: string, tools: ToolSpec[], toolChoice?: ChatRequest['toolChoice']) =>
  decideToolCall({ model: 'x', now: Date.now(), messages: [{ role: 'user', content: message }], temperature: 0, maxTokens: 100, tools, ...(toolChoice ? { toolChoice } : {}) });
const callOf = (decision: ReturnType<typeof decideToolCall>) => (decision && 'calls' in decision ? { name: decision.calls[0]!.name, arguments: decision.calls[0]!.arguments } : decision);

const weather = tool('get_weather', 'Current weather for a city', { city: { type: 'string', description: 'The city' } });
const convert = tool('convert_currency', 'Converts an amount between currencies', {
  amount: { type: 'number' },
  from: { type: 'string', enum: ['USD', 'EUR', 'GBP', 'JPY'] },
  to: { type: 'string', enum: ['USD', 'EUR', 'GBP', 'JPY'] },
});
const orderStatus = tool('order_status', 'Looks up the status of an order', { orderId: { type: 'string' } });

describe('the built-in engine reads arguments from sentences', () => {
  it('the phrasings that went wrong: a place by its name, currencies by their roles, an id, never a word of the tool’s own name', () => {
    expect(callOf(ask("What's the weather in Paris?", [weather]))).toEqual({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(callOf(ask('Weather in Buenos Aires today?', [weather]))).toEqual({ name: 'get_weather', arguments: { city: 'Buenos Aires' } });
    expect(callOf(ask('is it raining in tokyo', [weather]))).toEqual({ name: 'get_weather', arguments: { city: 'Tokyo' } });
    expect(callOf(ask('Convert 100 USD to EUR', [convert]))).toEqual({ name: 'convert_currency', arguments: { amount: 100, from: 'USD', to: 'EUR' } });
    expect(callOf(ask('How much is 20 pounds in yen?', [convert]))).toEqual({ name: 'convert_currency', arguments: { amount: 20, from: 'GBP', to: 'JPY' } });
    const capitalised = tool('get_weather', 'Current weather', { city: { type: 'string', pattern: '^[A-Z][a-z]+$' } });
    expect(callOf(ask('Weather in Paris?', [capitalised]))).toEqual({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(callOf(ask('I ordered 2 chairs, order ZX9', [orderStatus]))).toEqual({ name: 'order_status', arguments: { orderId: 'ZX9' } });
  });

  it('asks, naming what is missing, rather than fill a required argument with a word of the right shape', () => {
    expect(ask("What's the status of my order?", [orderStatus])).toEqual({ ask: expect.stringContaining('order id') });
    expect(ask('What is the weather like?', [weather])).toEqual({ ask: expect.stringContaining('city') });
  });

  it('numbers: digits, words, units and currency signs, each to the parameter whose words stand nearest', () => {
    const triangle = tool('calculate_triangle_area', 'Area of a triangle', { base: { type: 'number' }, height: { type: 'number' } });
    expect(fillArguments(triangle, 'Find the area of a triangle with a height of 5 units and a base of 10 units', new Date()).args).toEqual({ base: 10, height: 5 });
    const pack = tool('ship', 'Ships a parcel', { weightKg: { type: 'number' }, count: { type: 'integer' } });
    expect(fillArguments(pack, 'ship twenty parcels of 3 kg each', new Date()).args).toEqual({ count: 20, weightKg: 3 });
    const tip = tool('tip', 'Tip on a bill', { bill: { type: 'number' }, percent: { type: 'number' } });
    expect(fillArguments(tip, 'Tip 15% on a bill of $40', new Date()).args).toEqual({ bill: 40, percent: 15 });
  });

  it('quoted values and identifiers go to the parameter named beside them', () => {
    const listener = tool('add_listener', 'Adds an event listener', { element: { type: 'string' }, event: { type: 'string' }, callback: { type: 'string' } });
    expect(fillArguments(listener, "Add a 'click' event listener to the button element 'myButton' that calls handleClick", new Date()).args).toEqual({ event: 'click', element: 'myButton', callback: 'handleClick' });
    expect(fillArguments(tool('change_food', 'Changes a dish', { food_item: { type: 'string' } }), "I'd like the dish called 'chicken dish' extra spicy", new Date()).args).toEqual({ food_item: 'chicken dish' });
  });

  it('booleans from phrasing, with negation; optional parameters only when the message gives them', () => {
    const star = tool('github_star', 'Star history of repositories', { repos: { type: 'string' }, aligned: { type: 'boolean' } }, ['repos']);
    expect(fillArguments(star, 'Star history of octo/hello with the timelines aligned', new Date()).args).toEqual({ repos: 'octo/hello', aligned: true });
    expect(fillArguments(star, 'Star history of octo/hello, not aligned', new Date()).args).toEqual({ repos: 'octo/hello', aligned: false });
    expect(fillArguments(star, 'Star history of octo/hello', new Date()).args).toEqual({ repos: 'octo/hello' });
  });

  it('dates said in words, by the parameter’s format', () => {
    const book = tool('book_table', 'Books a table', { date: { type: 'string', format: 'date' } });
    expect(fillArguments(book, 'Book a table for tomorrow', new Date('2026-11-26T10:00:00Z')).args).toEqual({ date: '2026-11-27' });
    expect(fillArguments(book, 'Book a table next Friday', new Date('2026-11-26T10:00:00Z')).args).toEqual({ date: '2026-11-27' });
  });

  it('objects: their own properties read from the same message; enum values in code form said in words', () => {
    const aircon = tool('set_aircon', 'Controls the air conditioner', {
      body: { type: 'object', properties: { mode: { type: 'string', enum: ['COOL', 'AIR_DRY', 'AIR_CLEAN'] }, windStrength: { type: 'string', enum: ['LOW', 'MID', 'HIGH'] }, targetTemperature: { type: 'integer' } } },
    });
    expect(fillArguments(aircon, 'Switch the air conditioner to air dry mode with a medium wind strength', new Date()).args).toEqual({ body: { mode: 'AIR_DRY', windStrength: 'MID' } });
    expect(fillArguments(aircon, 'Set it to cool mode with a target temperature of 22 degrees', new Date()).args).toEqual({ body: { mode: 'COOL', targetTemperature: 22 } });
  });

  it('lists: every name said together', () => {
    const forecast = tool('forecast', 'Weather forecast for cities', { cities: { type: 'array', items: { type: 'string' }, description: 'Cities' } });
    expect(fillArguments(forecast, 'Forecast for Paris and London', new Date()).args).toEqual({ cities: ['Paris', 'London'] });
  });
});

describe('choosing the tool', () => {
  it('picks the tool the message is about among several, by its words and a few synonyms, and none when nothing fits', () => {
    expect(callOf(ask('Will it be raining in Oslo?', [convert, weather, orderStatus]))).toMatchObject({ name: 'get_weather' });
    expect(callOf(ask('Convert 5 EUR to USD', [weather, convert]))).toMatchObject({ name: 'convert_currency' });
    expect(ask('Write me a poem about autumn', [weather, convert, orderStatus])).toBeUndefined();
    expect(ask('Get me the current DNS records for example.com', [weather])).toBeUndefined();
  });

  it('calls a tool once for each value a message lists for its one parameter', () => {
    const decision = ask('What is the weather in Paris and London?', [weather]);
    expect(decision && 'calls' in decision ? decision.calls.map((c) => c.arguments) : decision).toEqual([{ city: 'Paris' }, { city: 'London' }]);
  });

  it('does not call a tool named for another action than the one asked for, nor fill an id or a date with a plain word', () => {
    const close = tool('close_project', 'Closes a project', { project_id: { type: 'string' } });
    expect(ask('create project Apollo-7', [close])).toBeUndefined();
    const status = tool('check_order_status', 'Checks the status of an order', { order_id: { type: 'string' } });
    expect(ask('I ordered a pair of pants and need a size M instead', [status])).toEqual({ ask: expect.stringContaining('order id') });
    const flights = tool('find_flights', 'Finds flights', { departure_date: { type: 'string' } });
    expect(ask('I want to find flights with IndiGo', [flights])).toEqual({ ask: expect.stringContaining('departure date') });
  });

  it('honours tool_choice: required always calls (a required argument the message does not give filled with its type), a named function is that one', () => {
    expect(callOf(ask('Write me a poem about autumn', [weather], 'required'))).toEqual({ name: 'get_weather', arguments: { city: 'Write me a poem about autumn' } });
    expect(callOf(ask('Weather in Paris please', [weather, convert], { name: 'convert_currency' }))).toMatchObject({ name: 'convert_currency' });
  });
});

describe('numbers, defaults and examples as calculators and bookings state them', () => {
  const triangle = tool('math_hypot', 'The hypotenuse of a right triangle', { x: { type: 'integer', description: 'The x-coordinate value.' }, y: { type: 'integer', description: 'The y-coordinate value.' } });
  const velocity = tool('calculate_final_velocity', 'Final velocity under constant acceleration', {
    initial_velocity: { type: 'number', description: 'The initial velocity of the object.' },
    acceleration: { type: 'number', description: 'The acceleration of the object.' },
    time: { type: 'number', description: 'The time of acceleration.' },
  });

  it('does not take a count of the values ("the other two sides as 4 and 5") or a unit’s exponent (m/s^2) for a value', () => {
    expect(callOf(ask('Calculate the hypotenuse of a right triangle given the lengths of the other two sides as 4 and 5.', [triangle]))).toEqual({ name: 'math_hypot', arguments: { x: 4, y: 5 } });
    const gcd = tool('math_gcd', 'Greatest common divisor of two numbers', { num1: { type: 'integer', description: 'The first number.' }, num2: { type: 'integer', description: 'The second number.' } });
    expect(callOf(ask('Calculate the greatest common divisor of two numbers: 40 and 50', [gcd]))).toEqual({ name: 'math_gcd', arguments: { num1: 40, num2: 50 } });
    // "started from rest" is an initial velocity of 0; "accelerated" names the acceleration.
    expect(callOf(ask('Calculate the final velocity of an object, knowing that it started from rest, accelerated at a rate of 9.8 m/s^2 for a duration of 5 seconds.', [velocity]))).toEqual({
      name: 'calculate_final_velocity',
      arguments: { initial_velocity: 0, acceleration: 9.8, time: 5 },
    });
  });

  it('keeps a minus sign, and gives a number to a string parameter as its digits', () => {
    const roots = tool('quadratic_roots', 'Roots of a quadratic equation', { a: { type: 'integer' }, b: { type: 'integer' }, c: { type: 'integer' } });
    expect(callOf(ask('Find the roots of a quadratic equation with coefficients a=1, b=-3, c=2.', [roots]))).toEqual({ name: 'quadratic_roots', arguments: { a: 1, b: -3, c: 2 } });
    const lawsuit = tool('get_lawsuit_details', 'Details of a lawsuit', { case_number: { type: 'string', description: 'Case number of the lawsuit.' } });
    expect(callOf(ask('Retrieve the details of the lawsuit with case number 12345', [lawsuit]))).toEqual({ name: 'get_lawsuit_details', arguments: { case_number: '12345' } });
  });

  it('gives a percentage as a decimal when the tool says it takes one', () => {
    const interest = tool('compound_interest', 'Compound interest', { principal: { type: 'integer', description: 'The initial principal amount.' }, rate: { type: 'number', description: 'The annual interest rate (as a decimal).' } });
    expect(callOf(ask('Compound interest on a principal amount of $10000 at an annual interest rate of 5%', [interest]))).toEqual({ name: 'compound_interest', arguments: { principal: 10000, rate: 0.05 } });
    const percent = tool('compound_interest', 'Compound interest', { principal: { type: 'integer' }, rate: { type: 'number', description: 'The annual interest rate in percent.' } });
    expect(callOf(ask('Compound interest on a principal of $10000 at a rate of 5%', [percent]))).toMatchObject({ arguments: { rate: 5 } });
  });

  it('fills a required parameter the message leaves out with the default the tool documents, and only then', () => {
    const factors = tool('get_prime_factors', 'Prime factors of a number', { number: { type: 'integer', description: 'The number' }, formatted: { type: 'boolean', description: 'Return formatted string if true. Default is true.' } });
    expect(callOf(ask('Find the prime factors of 450', [factors]))).toEqual({ name: 'get_prime_factors', arguments: { number: 450, formatted: true } });
    expect(callOf(ask('Find the prime factors of 450, not formatted', [factors]))).toEqual({ name: 'get_prime_factors', arguments: { number: 450, formatted: false } });
    const undocumented = tool('get_prime_factors', 'Prime factors of a number', { number: { type: 'integer' }, formatted: { type: 'boolean', description: 'Return formatted string if true.' } });
    expect(ask('Find the prime factors of 450', [undocumented])).toEqual({ ask: expect.stringContaining('formatted') });
  });

  it('reads a value the description gives as an example, a kind said before the thing, and a date in words', () => {
    const recipe = tool('find_recipe', 'Find a recipe', {
      dietary_restrictions: { type: 'string', description: 'Dietary restrictions e.g. vegetarian, vegan, gluten free.' },
      recipe_type: { type: 'string', description: 'Type of the recipe. E.g. dessert, main course, breakfast.' },
      time: { type: 'integer', description: 'Time limit in minutes to prep the meal.' },
    });
    expect(callOf(ask('Find a vegan soup recipe that takes under 30 minutes.', [recipe]))).toEqual({ name: 'find_recipe', arguments: { dietary_restrictions: 'vegan', recipe_type: 'soup', time: 30 } });
    // A quoted example is whole: "Berkeley, CA" is one place, not Berkeley and CA.
    const shop = tool('get_shopping', 'Price of an item', { item_name: { type: 'string' }, location: { type: 'string', description: "The city and state, such as 'Berkeley, CA'." } });
    expect(callOf(ask("What's the price of a 'winter jacket' in Berkeley, CA?", [shop]))).toEqual({ name: 'get_shopping', arguments: { item_name: 'winter jacket', location: 'Berkeley, CA' } });
    const hotel = tool('hotel_booking', 'Books a hotel room', { location: { type: 'string', description: 'The city' }, duration: { type: 'integer', description: 'Number of nights' }, start_date: { type: 'string', description: 'The date when your stay begins.' } });
    expect(callOf(ask('Book a room near Manhattan, New York for 3 nights starting from March 10th, 2023.', [hotel]))).toEqual({ name: 'hotel_booking', arguments: { location: 'Manhattan, New York', duration: 3, start_date: '2023-03-10' } });
    // A date is not a search's prompt.
    const search = tool('search_engine_query', 'Searches the web', { prompt: { type: 'string', description: 'The search query string.' } });
    expect(callOf(ask('Search the web (current date: 04 Mar 2024): "who is the current pm of india"', [search]))).toEqual({ name: 'search_engine_query', arguments: { prompt: 'who is the current pm of india' } });
  });
});

describe('choosing the tool by what the message asks', () => {
  it('reads arithmetic and everyday words for what a tool does: "394 times 213" multiplies, "add 5 to 3" sums, "buy" orders', () => {
    const tools = [
      tool('getCurrentTime', 'Returns the current local time in ISO 8601 format.', { timezone: { type: 'string' } }, []),
      tool('CalcProduct', 'Calculates the product of two numeric values.', { a: { type: 'integer', description: 'The first number' }, b: { type: 'integer', description: 'The second number' } }),
      tool('sum', 'Calculates the sum of two integers.', { a: { type: 'number' }, b: { type: 'number' } }),
    ];
    expect(callOf(ask('How much is 394 times 213?', tools))).toEqual({ name: 'CalcProduct', arguments: { a: 394, b: 213 } });
    expect(callOf(ask('Could you tell me what I get if I add 5.0 to 3.0?', tools))).toEqual({ name: 'sum', arguments: { a: 5, b: 3 } });
    expect(callOf(ask('What time is it in Tokyo?', tools))).toMatchObject({ name: 'getCurrentTime' });
  });

  it('takes "add" and "create" for one action, "delete" and "remove" for another', () => {
    const create = tool('create_contentitem', 'Creates a content item in the CMS', { title: { type: 'string', description: 'The title' } });
    const remove = tool('delete_contentitem', 'Deletes a content item from the CMS', { title: { type: 'string', description: 'The title' } });
    expect(callOf(ask("Add a news article titled 'Julian is testing' to our CMS", [create, remove]))).toEqual({ name: 'create_contentitem', arguments: { title: 'Julian is testing' } });
    expect(callOf(ask("Remove the content item titled 'Old news'", [create, remove]))).toEqual({ name: 'delete_contentitem', arguments: { title: 'Old news' } });
  });

  it('does not take a verb after "to" for a place ("I need to add…")', () => {
    const cms = tool('create_page', 'Creates a page', { title: { type: 'string', description: 'The title' }, address: { type: 'string', description: 'The URL address of the page' } }, ['title']);
    expect(callOf(ask("I need to add a page titled 'Welcome'", [cms]))).toEqual({ name: 'create_page', arguments: { title: 'Welcome' } });
  });
});

describe('values told apart by how they are said', () => {
  it('takes "between A and B" and "from A to B" in order for an origin and a destination', () => {
    const distance = tool('get_distance', 'Distance between two cities', { origin: { type: 'string', description: 'The starting city.' }, destination: { type: 'string', description: 'The destination city.' }, unit: { type: 'string', description: "Unit of distance, 'km' or 'miles'." } }, ['origin', 'destination']);
    expect(callOf(ask('Find the distance between New York and Boston in miles.', [distance]))).toEqual({ name: 'get_distance', arguments: { origin: 'New York', destination: 'Boston', unit: 'miles' } });
    expect(callOf(ask('How far is it from Boston to New York?', [distance]))).toEqual({ name: 'get_distance', arguments: { origin: 'Boston', destination: 'New York' } });
  });

  it('gives a number to the noun it counts ("3 bedrooms, 2 bathrooms"), and keeps bracketed lists apart', () => {
    const house = tool('predict_house_price', 'Predict the price of a house', { bedrooms: { type: 'integer', description: 'Number of bedrooms.' }, bathrooms: { type: 'integer', description: 'Number of bathrooms.' } });
    expect(callOf(ask('Predict the price of a house with 3 bedrooms, 2 bathrooms.', [house]))).toEqual({ name: 'predict_house_price', arguments: { bedrooms: 3, bathrooms: 2 } });
    const vectors = tool('cosine_similarity', 'Cosine similarity of two vectors', { vector1: { type: 'array', items: { type: 'integer' }, description: 'The first vector.' }, vector2: { type: 'array', items: { type: 'integer' }, description: 'The second vector.' } });
    expect(callOf(ask('Calculate the cosine similarity between vectors [1, 2, 3] and [4, 5, 6].', [vectors]))).toEqual({ name: 'cosine_similarity', arguments: { vector1: [1, 2, 3], vector2: [4, 5, 6] } });
  });

  it('reads a topic after "about", and a quoted option only as the description writes it', () => {
    const news = tool('get_news', 'Fetch the latest news articles on a topic', { topic: { type: 'string', description: 'The topic of the news.' }, quantity: { type: 'integer', description: 'Number of articles.' } });
    expect(callOf(ask('Get the latest 5 news articles about climate change.', [news]))).toEqual({ name: 'get_news', arguments: { topic: 'climate change', quantity: 5 } });
    const exports = tool('list_exports', 'Lists the exports of a bot', { botId: { type: 'string', description: 'The bot id' }, filterName: { type: 'string', description: "Filter by 'Bot' or 'BotLocale'." } }, ['botId']);
    expect(callOf(ask("List the exports for my bot 'my-bot-id'", [exports]))).toEqual({ name: 'list_exports', arguments: { botId: 'my-bot-id' } });
  });
});
