/**
 * Name tables of the demo company's people and places, and the helpers that draw from them with
 * the seeded generator.
 */
import type { SeededRandom } from "../../../platform/seeded-random.ts";

/** First names of customers, employees and leads. */
export const FIRST_NAMES = [
  "Maria",
  "James",
  "Aisha",
  "Chen",
  "Olivia",
  "Noah",
  "Fatima",
  "Liam",
  "Sofia",
  "Mateo",
  "Amara",
  "Ethan",
  "Priya",
  "Lucas",
  "Hannah",
  "Diego",
  "Yuki",
  "Grace",
  "Omar",
  "Elena",
  "Kwame",
  "Zoe",
];
/** Last names of customers, employees and leads. */
export const LAST_NAMES = [
  "Garcia",
  "Smith",
  "Khan",
  "Wong",
  "Johnson",
  "Okafor",
  "Rossi",
  "Nguyen",
  "Silva",
  "Schmidt",
  "Brown",
  "Patel",
  "Kowalski",
  "Haddad",
  "Murphy",
  "Tanaka",
  "Lopez",
  "Fischer",
  "Mensah",
  "Novak",
];
/** First words of business names (and street names). */
export const COMPANY_WORDS = [
  "Bayside",
  "Cedar",
  "Harbor",
  "Maple",
  "Summit",
  "Riverside",
  "Oak Hill",
  "Northgate",
  "Lakeview",
  "Pinecrest",
  "Granite",
  "Willow",
  "Sunset",
  "Meadow",
  "Ironwood",
  "Brookside",
];
/** What a business customer is. */
export const COMPANY_KINDS = [
  "Dental",
  "Cafe",
  "Realty",
  "Bakery",
  "Fitness",
  "Law Office",
  "Clinic",
  "Books",
  "Florist",
  "Studio",
  "Veterinary",
  "Properties",
];
/** What a vendor sells. */
export const VENDOR_KINDS = [
  "Lumber Yard",
  "Electric Supply",
  "Plumbing Supply",
  "Hardware",
  "Tile Outlet",
  "Paint Co",
  "Concrete",
  "Glass and Mirror",
  "Roofing Supply",
  "Tool Rental",
];
/** Jobs done for customers. */
export const JOB_NAMES = [
  "Kitchen Remodel",
  "Bathroom Remodel",
  "Deck",
  "Basement Finish",
  "Roof Repair",
  "Office Build-out",
  "Window Replacement",
  "Addition",
  "Garage",
  "Patio",
];
/** City, state and postal code of addresses. */
export const CITIES: ReadonlyArray<readonly [string, string, string]> = [
  ["Springfield", "IL", "62701"],
  ["Riverton", "IL", "62561"],
  ["Chatham", "IL", "62629"],
  ["Rochester", "IL", "62563"],
];

/** A name not used yet in the entities' shared name space (a suffix when taken). */
export function unique(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate.toLowerCase()); n++) candidate = `${name} ${n}`;
  used.add(candidate.toLowerCase());
  return candidate;
}

/** A street address in one of {@link CITIES}. */
export function address(random: SeededRandom): Record<string, string> {
  const [city, state, postalCode] = random.pick(CITIES);
  return {
    Addr1: `${random.int(10, 9899)} ${random.pick(COMPANY_WORDS)} ${random.pick(["St", "Ave", "Rd", "Blvd"])}`,
    City: city,
    State: state,
    PostalCode: postalCode,
  };
}

/** A phone number of the demo company's area. */
export function phone(random: SeededRandom): string {
  return `217-555-${String(random.int(100, 9999)).padStart(4, "0")}`;
}
