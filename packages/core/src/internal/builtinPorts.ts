import type { Location } from "../Location.js"

type Row = readonly [unlocode: string, name: string, lat: number, lng: number, timezone?: string]

const country = (
  iso_a2: string,
  name: string,
  timezone: string,
  rows: ReadonlyArray<Row>
): ReadonlyArray<Location> =>
  rows.map(([unlocode, portName, lat, lng, tz]) => ({
    unlocode,
    name: portName,
    country: { name, iso_a2 },
    timezone: tz ?? timezone,
    coordinates: { lat, lng }
  }))

/**
 * The built-in directory: the world's largest container ports by throughput (the usual
 * top-100 lists by TEU) and a number of other major gateways, with UN/LOCODE, English
 * name, country, IANA time zone and the approximate coordinates of the port.
 */
export const builtinPorts: ReadonlyArray<Location> = [
  ...country("CN", "China", "Asia/Shanghai", [
    ["CNSHA", "Shanghai", 31.2304, 121.4737],
    ["CNNGB", "Ningbo", 29.8683, 121.544],
    ["CNSZX", "Shenzhen", 22.5431, 114.0579],
    ["CNYTN", "Yantian", 22.5756, 114.2775],
    ["CNSHK", "Shekou", 22.4789, 113.9125],
    ["CNTAO", "Qingdao", 36.0671, 120.3826],
    ["CNCAN", "Guangzhou", 23.1291, 113.2644],
    ["CNNSA", "Nansha", 22.6447, 113.6628],
    ["CNTXG", "Tianjin Xingang", 38.9833, 117.75],
    ["CNXMN", "Xiamen", 24.4798, 118.0894],
    ["CNRZH", "Rizhao", 35.3833, 119.55],
    ["CNYIK", "Yingkou", 40.6653, 122.235],
    ["CNLYG", "Lianyungang", 34.7414, 119.4528],
    ["CNDLC", "Dalian", 38.914, 121.6147],
    ["CNFOC", "Fuzhou", 26.0745, 119.2965],
    ["CNNKG", "Nanjing", 32.0603, 118.7969],
    ["CNDGG", "Dongguan", 22.8167, 113.6167],
    ["CNFOS", "Foshan", 23.0215, 113.1214],
    ["CNQZH", "Qinzhou", 21.6833, 108.6],
    ["CNTAG", "Taicang", 31.6167, 121.2333],
    ["CNWUH", "Wuhan", 30.5928, 114.3055],
    ["CNQZJ", "Quanzhou", 24.874, 118.6757],
    ["CNZUH", "Zhuhai", 22.271, 113.5767],
    ["CNNTG", "Nantong", 31.9802, 120.8943]
  ]),
  ...country("HK", "Hong Kong", "Asia/Hong_Kong", [
    ["HKHKG", "Hong Kong", 22.335, 114.13]
  ]),
  ...country("TW", "Taiwan", "Asia/Taipei", [
    ["TWKHH", "Kaohsiung", 22.6163, 120.2766],
    ["TWKEL", "Keelung", 25.1333, 121.7333],
    ["TWTXG", "Taichung", 24.2833, 120.5167],
    ["TWTPE", "Taipei", 25.1581, 121.3911]
  ]),
  ...country("KR", "South Korea", "Asia/Seoul", [
    ["KRPUS", "Busan", 35.1028, 129.0403],
    ["KRINC", "Incheon", 37.4563, 126.6052],
    ["KRKAN", "Gwangyang", 34.9167, 127.7]
  ]),
  ...country("JP", "Japan", "Asia/Tokyo", [
    ["JPTYO", "Tokyo", 35.6167, 139.7833],
    ["JPYOK", "Yokohama", 35.4437, 139.638],
    ["JPUKB", "Kobe", 34.6901, 135.1955],
    ["JPNGO", "Nagoya", 35.0833, 136.8833],
    ["JPOSA", "Osaka", 34.65, 135.4333]
  ]),
  ...country("SG", "Singapore", "Asia/Singapore", [
    ["SGSIN", "Singapore", 1.2644, 103.8222]
  ]),
  ...country("MY", "Malaysia", "Asia/Kuala_Lumpur", [
    ["MYPKG", "Port Klang", 3.0, 101.4],
    ["MYTPP", "Tanjung Pelepas", 1.3644, 103.5483],
    ["MYPEN", "Penang", 5.4141, 100.3288]
  ]),
  ...country("VN", "Vietnam", "Asia/Ho_Chi_Minh", [
    ["VNSGN", "Ho Chi Minh City", 10.7626, 106.7578],
    ["VNCMT", "Cai Mep", 10.5333, 107.0333],
    ["VNHPH", "Haiphong", 20.8449, 106.6881],
    ["VNDAD", "Da Nang", 16.0544, 108.2022]
  ]),
  ...country("TH", "Thailand", "Asia/Bangkok", [
    ["THLCH", "Laem Chabang", 13.0827, 100.8831],
    ["THBKK", "Bangkok", 13.7063, 100.568]
  ]),
  ...country("ID", "Indonesia", "Asia/Jakarta", [
    ["IDJKT", "Jakarta", -6.1045, 106.8806],
    ["IDSUB", "Surabaya", -7.2, 112.7333]
  ]),
  ...country("PH", "Philippines", "Asia/Manila", [
    ["PHMNL", "Manila", 14.5995, 120.9667],
    ["PHBTG", "Batangas", 13.7565, 121.0583]
  ]),
  ...country("IN", "India", "Asia/Kolkata", [
    ["INMUN", "Mundra", 22.7396, 69.704],
    ["INNSA", "Nhava Sheva", 18.95, 72.95],
    ["INMAA", "Chennai", 13.1, 80.2927],
    ["INPAV", "Pipavav", 20.9167, 71.5167],
    ["INCOK", "Cochin", 9.9667, 76.2667],
    ["INCCU", "Kolkata", 22.5726, 88.3639],
    ["INVTZ", "Visakhapatnam", 17.6868, 83.2185]
  ]),
  ...country("LK", "Sri Lanka", "Asia/Colombo", [
    ["LKCMB", "Colombo", 6.9497, 79.8428]
  ]),
  ...country("PK", "Pakistan", "Asia/Karachi", [
    ["PKKHI", "Karachi", 24.84, 66.98],
    ["PKBQM", "Port Qasim", 24.7833, 67.35]
  ]),
  ...country("BD", "Bangladesh", "Asia/Dhaka", [
    ["BDCGP", "Chittagong", 22.31, 91.8]
  ]),
  ...country("AE", "United Arab Emirates", "Asia/Dubai", [
    ["AEJEA", "Jebel Ali", 25.0112, 55.0611],
    ["AEKHL", "Khalifa Port", 24.8117, 54.6464],
    ["AEKLF", "Khor Fakkan", 25.35, 56.3667]
  ]),
  ...country("OM", "Oman", "Asia/Muscat", [
    ["OMSLL", "Salalah", 16.9403, 54.0],
    ["OMSOH", "Sohar", 24.4667, 56.6333]
  ]),
  ...country("SA", "Saudi Arabia", "Asia/Riyadh", [
    ["SAJED", "Jeddah", 21.4667, 39.1667],
    ["SAKAC", "King Abdullah Port", 22.5167, 39.0833],
    ["SADMM", "Dammam", 26.5, 50.2]
  ]),
  ...country("QA", "Qatar", "Asia/Qatar", [
    ["QAHMD", "Hamad Port", 25.0, 51.6]
  ]),
  ...country("IL", "Israel", "Asia/Jerusalem", [
    ["ILHFA", "Haifa", 32.8167, 35.0],
    ["ILASH", "Ashdod", 31.8333, 34.6333]
  ]),
  ...country("EG", "Egypt", "Africa/Cairo", [
    ["EGPSD", "Port Said", 31.2653, 32.3019],
    ["EGALY", "Alexandria", 31.2001, 29.9187],
    ["EGDAM", "Damietta", 31.4667, 31.7667]
  ]),
  ...country("TR", "Turkey", "Europe/Istanbul", [
    ["TRAMR", "Ambarli", 40.9667, 28.6833],
    ["TRMER", "Mersin", 36.8, 34.6333]
  ]),
  ...country("MA", "Morocco", "Africa/Casablanca", [
    ["MAPTM", "Tanger Med", 35.8833, -5.5]
  ]),
  ...country("NL", "Netherlands", "Europe/Amsterdam", [
    ["NLRTM", "Rotterdam", 51.9225, 4.4792]
  ]),
  ...country("BE", "Belgium", "Europe/Brussels", [
    ["BEANR", "Antwerp", 51.2194, 4.4025],
    ["BEZEE", "Zeebrugge", 51.3333, 3.2]
  ]),
  ...country("DE", "Germany", "Europe/Berlin", [
    ["DEHAM", "Hamburg", 53.5461, 9.9665],
    ["DEBRV", "Bremerhaven", 53.5396, 8.5809],
    ["DEWVN", "Wilhelmshaven", 53.5833, 8.15]
  ]),
  ...country("GB", "United Kingdom", "Europe/London", [
    ["GBFXT", "Felixstowe", 51.95, 1.3333],
    ["GBSOU", "Southampton", 50.9, -1.4],
    ["GBLGP", "London Gateway", 51.505, 0.47]
  ]),
  ...country("FR", "France", "Europe/Paris", [
    ["FRLEH", "Le Havre", 49.4944, 0.1079],
    ["FRMRS", "Marseille", 43.2965, 5.3698],
    ["FRDKK", "Dunkirk", 51.0343, 2.3768]
  ]),
  ...country("ES", "Spain", "Europe/Madrid", [
    ["ESVLC", "Valencia", 39.45, -0.3167],
    ["ESALG", "Algeciras", 36.1333, -5.4333],
    ["ESBCN", "Barcelona", 41.35, 2.1667],
    ["ESLPA", "Las Palmas", 28.1333, -15.4333, "Atlantic/Canary"]
  ]),
  ...country("PT", "Portugal", "Europe/Lisbon", [
    ["PTSIN", "Sines", 37.95, -8.8667],
    ["PTLIS", "Lisbon", 38.7223, -9.1393]
  ]),
  ...country("GR", "Greece", "Europe/Athens", [
    ["GRPIR", "Piraeus", 37.9333, 23.6333]
  ]),
  ...country("IT", "Italy", "Europe/Rome", [
    ["ITGIT", "Gioia Tauro", 38.4333, 15.9],
    ["ITGOA", "Genoa", 44.4056, 8.9463],
    ["ITSPE", "La Spezia", 44.1, 9.8333],
    ["ITTRS", "Trieste", 45.6495, 13.7768]
  ]),
  ...country("MT", "Malta", "Europe/Malta", [
    ["MTMAR", "Marsaxlokk", 35.8167, 14.55]
  ]),
  ...country("PL", "Poland", "Europe/Warsaw", [
    ["PLGDN", "Gdansk", 54.4, 18.6667]
  ]),
  ...country("SI", "Slovenia", "Europe/Ljubljana", [
    ["SIKOP", "Koper", 45.5469, 13.7294]
  ]),
  ...country("RO", "Romania", "Europe/Bucharest", [
    ["ROCND", "Constanta", 44.1598, 28.6348]
  ]),
  ...country("RU", "Russia", "Europe/Moscow", [
    ["RULED", "Saint Petersburg", 59.8833, 30.2167],
    ["RUNVS", "Novorossiysk", 44.7167, 37.7833],
    ["RUVVO", "Vladivostok", 43.1155, 131.8855, "Asia/Vladivostok"]
  ]),
  ...country("SE", "Sweden", "Europe/Stockholm", [
    ["SEGOT", "Gothenburg", 57.6889, 11.8528]
  ]),
  ...country("ZA", "South Africa", "Africa/Johannesburg", [
    ["ZADUR", "Durban", -29.8667, 31.0333]
  ]),
  ...country("TG", "Togo", "Africa/Lome", [
    ["TGLFW", "Lome", 6.1333, 1.2833]
  ]),
  ...country("NG", "Nigeria", "Africa/Lagos", [
    ["NGAPP", "Apapa", 6.45, 3.3667]
  ]),
  ...country("GH", "Ghana", "Africa/Accra", [
    ["GHTEM", "Tema", 5.6333, -0.0167]
  ]),
  ...country("CI", "Côte d'Ivoire", "Africa/Abidjan", [
    ["CIABJ", "Abidjan", 5.2833, -4.0167]
  ]),
  ...country("KE", "Kenya", "Africa/Nairobi", [
    ["KEMBA", "Mombasa", -4.05, 39.6667]
  ]),
  ...country("DJ", "Djibouti", "Africa/Djibouti", [
    ["DJJIB", "Djibouti", 11.6, 43.1333]
  ]),
  ...country("MU", "Mauritius", "Indian/Mauritius", [
    ["MUPLU", "Port Louis", -20.1609, 57.5012]
  ]),
  ...country("US", "United States", "America/New_York", [
    ["USLAX", "Los Angeles", 33.7405, -118.2723, "America/Los_Angeles"],
    ["USLGB", "Long Beach", 33.754, -118.216, "America/Los_Angeles"],
    ["USOAK", "Oakland", 37.7955, -122.279, "America/Los_Angeles"],
    ["USSEA", "Seattle", 47.5806, -122.35, "America/Los_Angeles"],
    ["USTIW", "Tacoma", 47.2667, -122.4167, "America/Los_Angeles"],
    ["USNYC", "New York", 40.6681, -74.0451],
    ["USSAV", "Savannah", 32.0835, -81.0998],
    ["USORF", "Norfolk", 36.8508, -76.2859],
    ["USCHS", "Charleston", 32.7765, -79.9311],
    ["USBAL", "Baltimore", 39.2667, -76.5833],
    ["USMIA", "Miami", 25.7743, -80.17],
    ["USHOU", "Houston", 29.7267, -95.2683, "America/Chicago"]
  ]),
  ...country("CA", "Canada", "America/Vancouver", [
    ["CAVAN", "Vancouver", 49.2827, -123.1207],
    ["CAPRR", "Prince Rupert", 54.315, -130.3208],
    ["CAMTR", "Montreal", 45.5017, -73.5673, "America/Toronto"]
  ]),
  ...country("MX", "Mexico", "America/Mexico_City", [
    ["MXZLO", "Manzanillo", 19.0522, -104.3158],
    ["MXLZC", "Lazaro Cardenas", 17.9333, -102.1833],
    ["MXVER", "Veracruz", 19.2, -96.1333]
  ]),
  ...country("PA", "Panama", "America/Panama", [
    ["PAMIT", "Manzanillo", 9.3667, -79.8833],
    ["PABLB", "Balboa", 8.95, -79.5667],
    ["PAONX", "Colon", 9.3547, -79.9011]
  ]),
  ...country("CO", "Colombia", "America/Bogota", [
    ["COCTG", "Cartagena", 10.391, -75.4794],
    ["COBUN", "Buenaventura", 3.8801, -77.0312]
  ]),
  ...country("PE", "Peru", "America/Lima", [
    ["PECLL", "Callao", -12.05, -77.15]
  ]),
  ...country("EC", "Ecuador", "America/Guayaquil", [
    ["ECGYE", "Guayaquil", -2.1894, -79.8891]
  ]),
  ...country("BR", "Brazil", "America/Sao_Paulo", [
    ["BRSSZ", "Santos", -23.9608, -46.3336],
    ["BRPNG", "Paranagua", -25.5167, -48.5167],
    ["BRRIG", "Rio Grande", -32.035, -52.0986]
  ]),
  ...country("CL", "Chile", "America/Santiago", [
    ["CLSAI", "San Antonio", -33.5933, -71.6217],
    ["CLVAP", "Valparaiso", -33.0472, -71.6127]
  ]),
  ...country("AR", "Argentina", "America/Argentina/Buenos_Aires", [
    ["ARBUE", "Buenos Aires", -34.5833, -58.3667]
  ]),
  ...country("JM", "Jamaica", "America/Jamaica", [
    ["JMKIN", "Kingston", 17.9714, -76.7931]
  ]),
  ...country("DO", "Dominican Republic", "America/Santo_Domingo", [
    ["DOCAU", "Caucedo", 18.425, -69.6333]
  ]),
  ...country("BS", "Bahamas", "America/Nassau", [
    ["BSFPO", "Freeport", 26.5333, -78.7667]
  ]),
  ...country("AU", "Australia", "Australia/Sydney", [
    ["AUMEL", "Melbourne", -37.8333, 144.9167, "Australia/Melbourne"],
    ["AUSYD", "Sydney", -33.9667, 151.2167],
    ["AUBNE", "Brisbane", -27.3833, 153.1667, "Australia/Brisbane"]
  ]),
  ...country("NZ", "New Zealand", "Pacific/Auckland", [
    ["NZTRG", "Tauranga", -37.65, 176.1833],
    ["NZAKL", "Auckland", -36.8433, 174.7667]
  ])
]
