/**
 * Documents a strict XML reader refuses: the service's readers' tests (saxes and the purpose-built
 * readers must refuse them alike) and bench/xml-readers.ts (which candidate readers let one through).
 */
export const REFUSED_XML: readonly string[] = [
  "<A><B></A>",
  "<A/><B/>",
  "<A>text<B/></A>",
  "<A>&undefined;</A>",
  "<A>&nbsp;</A>",
  '<!DOCTYPE A [<!ENTITY e "x">]><A>&e;</A>',
  "<!DOCTYPE A><A/>",
  `${"<A>".repeat(65)}${"</A>".repeat(65)}`,
  "",
  "plain text",
  "<A>",
  '<A x="1" x="2"/>',
  "<A x=1/>",
  "<A>&#0;</A>",
  "<A>\u0001</A>",
  "<A>a & b</A>",
  "<A>a < b</A>",
  "<1A/>",
  "<A/>trailing",
];
