import * as Storage from "../src/Storage.js"
import { storageContract } from "../test-kit/index.js"

storageContract("memory", Storage.layerMemory, { numRuns: 50 })
