import * as RateLimitStore from "../src/RateLimitStore.js"
import { rateLimitContract } from "../test-kit/index.js"

rateLimitContract("memory", RateLimitStore.layerMemory, { numRuns: 50 })
