import { typedResourcesShard } from "./typed-resources-suite.ts";

typedResourcesShard(1, 3);
