import { typedResourcesShard } from "./typed-resources-suite.ts";

typedResourcesShard(0, 3);
