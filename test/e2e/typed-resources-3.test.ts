import { typedResourcesShard } from "./typed-resources-suite.ts";

typedResourcesShard(2, 3);
