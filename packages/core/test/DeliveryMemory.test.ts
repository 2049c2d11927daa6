import { Storage } from "@tradeflow/core"
import { deliveryContract } from "@tradeflow/core/test-kit"

deliveryContract("memory", Storage.layerMemory, { numRuns: 50 })
