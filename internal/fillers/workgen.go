package fillers

// The generators of the work chores' files. Each draws everything that
// varies from its own gen, seeded by the chore's ID, and never ranges over
// a map, so the files are the same on every run and every machine. They
// aim at what such files look like at a glance (a log a person would tail,
// a CSV a person would sort), with a few planted facts for the chore's
// question to find; nothing here needs to compile or add up.

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// gen is a chore's source of variation.
type gen struct{ r *rand.Rand }

func newGen(id string) *gen {
	h := fnv.New64a()
	h.Write([]byte(id))
	return &gen{r: rand.New(rand.NewPCG(h.Sum64(), pcgStream))}
}

func (g *gen) intn(n int) int         { return g.r.IntN(n) }
func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool  { return g.r.Float64() < p }

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(len(digits))]
	}
	return string(b)
}

func (g *gen) ms(lo, hi int) time.Duration {
	return time.Duration(g.between(lo, hi)) * time.Millisecond
}

// ip is a private address; built by hand because the big logs need
// thousands of them and fmt would be most of the corpus's generation time.
func (g *gen) ip() string {
	b := make([]byte, 0, 15)
	b = append(b, "10."...)
	b = strconv.AppendInt(b, int64(g.between(1, 40)), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(g.intn(256)), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(g.between(2, 254)), 10)
	return string(b)
}

func oneOf[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// morning is when the logs start: a fixed instant, never the clock.
var morning = time.Date(2026, 11, 18, 6, 0, 0, 0, time.UTC)

func gatewayLog(g *gen, put func(rel, content string)) {
	routes := []string{
		"GET /v1/orders/%d", "GET /v1/products/%d", "POST /v1/cart/%d/items", "GET /v1/stock/%d",
		"POST /v1/checkout", "GET /v1/customers/%d/addresses", "PATCH /v1/orders/%d", "GET /v1/categories",
		"DELETE /v1/cart/%d/items/%d", "GET /v1/orders/%d/items", "POST /v1/sessions", "GET /v1/shipping/rates",
	}
	agents := []string{"shopfront-ios/5.12.1", "shopfront-android/5.12.0", "shopfront-web/2026.11.3", "partner-sync/1.4"}
	route := func() string {
		r := oneOf(g, routes)
		switch strings.Count(r, "%d") {
		case 1:
			return fmt.Sprintf(r, g.between(1000, 99999))
		case 2:
			return fmt.Sprintf(r, g.between(1000, 99999), g.between(1, 40))
		}
		return r
	}
	var b strings.Builder
	b.Grow(90 << 10)
	t := morning
	const entries = 600
	burst := entries - 150 // timeouts to inventory-svc, then the breaker opens
	for i := range entries {
		t = t.Add(g.ms(40, 1400))
		ts := t.Format("2006-01-02T15:04:05.000Z")
		req := g.hex(12)
		x := g.intn(1000)
		switch {
		case i >= burst && i < burst+55 && x < 380:
			fmt.Fprintf(&b, "%s ERROR [gateway] req=%s upstream timeout after 5000ms calling inventory-svc for GET /v1/stock/%d\n",
				ts, req, g.between(1000, 99999))
		case i >= burst+55 && i < burst+70 && x < 500:
			fmt.Fprintf(&b, "%s WARN  [gateway] req=%s circuit breaker open for inventory-svc, failing fast (503) for GET /v1/stock/%d\n",
				ts, req, g.between(1000, 99999))
		case i == entries-300 || i == entries-45 || x < 4:
			fmt.Fprintf(&b, "%s ERROR [gateway] req=%s unhandled exception in GET /v1/orders/%d/items\n", ts, req, g.between(1000, 99999))
			b.WriteString("java.lang.NullPointerException: Cannot invoke \"com.shopfront.orders.Item.getSku()\" because \"item\" is null\n" +
				"\tat com.shopfront.orders.ItemMapper.toView(ItemMapper.java:88)\n" +
				"\tat com.shopfront.orders.OrderItemsHandler.lambda$handle$2(OrderItemsHandler.java:54)\n" +
				"\tat java.base/java.util.stream.ReferencePipeline$3$1.accept(ReferencePipeline.java:197)\n" +
				"\tat java.base/java.util.ArrayList$ArrayListSpliterator.forEachRemaining(ArrayList.java:1625)\n" +
				"\tat java.base/java.util.stream.AbstractPipeline.copyInto(AbstractPipeline.java:509)\n" +
				"\tat com.shopfront.orders.OrderItemsHandler.handle(OrderItemsHandler.java:57)\n" +
				"\tat com.shopfront.gateway.Router.dispatch(Router.java:141)\n" +
				"\tat io.netty.channel.AbstractChannelHandlerContext.invokeChannelRead(AbstractChannelHandlerContext.java:444)\n" +
				"\tat java.base/java.lang.Thread.run(Thread.java:1583)\n")
		case x < 22:
			fmt.Fprintf(&b, "%s ERROR [gateway] req=%s connection reset by peer (upstream=pricing-svc) for %s\n", ts, req, route())
		case x < 60:
			fmt.Fprintf(&b, "%s WARN  [gateway] req=%s slow upstream %s %dms for %s\n",
				ts, req, oneOf(g, []string{"inventory-svc", "pricing-svc", "orders-svc"}), g.between(1200, 4800), route())
		default:
			r := route()
			status := 200
			switch {
			case strings.HasPrefix(r, "POST") && x%3 == 0:
				status = 201
			case x%41 == 0:
				status = 404
			case x%67 == 0:
				status = 401
			}
			fmt.Fprintf(&b, "%s INFO  [gateway] req=%s %s %d %dms client=%s ua=%s\n",
				ts, req, r, status, g.between(4, 380), g.ip(), oneOf(g, agents))
		}
	}
	put("logs/gateway.log", b.String())
}

func workerLog(g *gen, put func(rel, content string)) {
	jobs := []string{"jobs.email_digest", "jobs.invoice_pdf", "jobs.search_reindex", "jobs.webhook_delivery", "jobs.image_resize", "jobs.stock_sync"}
	var b strings.Builder
	b.Grow(100 << 10)
	t := morning
	job := 812000
	for i := range 950 {
		t = t.Add(g.ms(300, 9000))
		ts := t.Format("2006-01-02 15:04:05,000")
		w := g.between(1, 6)
		job += g.between(1, 4)
		x := g.intn(1000)
		switch {
		case i == 310 || i == 655 || x < 6:
			fmt.Fprintf(&b, "%s ERROR [worker-%d] jobs.invoice_pdf: retries exhausted for job=%d after 5 attempts, moved to dead-letter queue\n", ts, w, job-g.between(20, 90))
		case x < 50:
			fmt.Fprintf(&b, "%s WARN  [worker-%d] jobs.invoice_pdf: retry job=%d attempt=%d/5 after: render timeout after 30s\n", ts, w, job, g.between(2, 5))
		case x < 80:
			fmt.Fprintf(&b, "%s WARN  [worker-%d] jobs.email_digest: smtp 421 too many connections, backing off %ds (job=%d)\n", ts, w, g.between(2, 30), job)
		case x < 98:
			fmt.Fprintf(&b, "%s WARN  [worker-%d] jobs.search_reindex: job=%d took %ds (soft limit 20s)\n", ts, w, job, g.between(21, 95))
		case x < 114:
			fmt.Fprintf(&b, "%s ERROR [worker-%d] jobs.webhook_delivery: POST https://hooks.partner-%c.example/orders returned 503 (job=%d, will retry)\n",
				ts, w, 'a'+rune(g.intn(3)), job)
		case x < 124:
			fmt.Fprintf(&b, "%s WARN  [worker-%d] jobs.image_resize: source %s.jpg is %d MB, over the 20 MB limit, skipped (job=%d)\n",
				ts, w, g.hex(10), g.between(21, 64), job)
		case x < 560:
			fmt.Fprintf(&b, "%s INFO  [worker-%d] %s: done job=%d in %dms\n", ts, w, oneOf(g, jobs), job, g.between(40, 19000))
		default:
			fmt.Fprintf(&b, "%s DEBUG [worker-%d] picked job=%d from queue %s (depth %d)\n", ts, w, job,
				oneOf(g, []string{"default", "mail", "documents", "search"}), g.between(0, 140))
		}
	}
	put("logs/worker-queue.log", b.String())
}

// shopPackage is one package of the generated source tree.
type shopPackage struct {
	name  string
	files []string
	nouns []string
	todo  float64 // chance of a TODO or FIXME above a function
	notes []string
}

func shopTree(g *gen, put func(rel, content string)) {
	common := []string{
		"TODO: pass ctx through once the client takes one",
		"TODO: move this limit to config",
		"TODO: drop after the v1 API is retired",
		"TODO: paginate; this loads every row",
		"TODO: metrics for retries",
		"TODO(kofi): share this helper with the admin service",
		"FIXME: the error is swallowed here, callers never see a failed write",
		"TODO: log the upstream's raw response when decoding fails",
	}
	pkgs := []shopPackage{
		{"billing", []string{"invoice.go", "vat.go", "credit_note.go", "currency.go", "dunning.go"},
			[]string{"Invoice", "TaxRate", "CreditNote", "ExchangeRate", "Reminder"}, 0.9, []string{
				"TODO(mara): round VAT per line item, not per invoice",
				"FIXME: double-counts refunds issued on the same day as the charge",
				"TODO: currencies without minor units (JPY, KRW)",
				"FIXME(ines): the reminder can go out while a payment is still pending",
				"TODO: reverse-charge wording for B2B customers inside the EU",
				"FIXME: exchange rate taken at refund time instead of invoice time",
			}},
		{"catalog", []string{"product.go", "price_list.go", "search.go", "images.go", "import.go"},
			[]string{"Product", "PriceList", "SearchIndex", "ImageSet", "ImportJob"}, 0.45, []string{
				"TODO: cache category trees per locale",
				"FIXME(jonas): races with the nightly import; needs the import lock",
				"TODO: reject images over 20 MB before upload, not after",
				"TODO: variant ordering is alphabetical, merchandisers want manual",
			}},
		{"shipping", []string{"rates.go", "labels.go", "tracking.go", "zones.go", "carriers.go"},
			[]string{"Rate", "Label", "Shipment", "Zone", "Carrier"}, 0.4, []string{
				"TODO(ines): cache the zone lookup per postcode prefix",
				"FIXME: cut-off time compared in server local time, not the warehouse's",
				"TODO: retry label creation on carrier 429",
			}},
		{"auth", []string{"session.go", "tokens.go", "password.go", "roles.go", "oauth.go"},
			[]string{"Session", "Token", "Credential", "Role", "Grant"}, 0.3, []string{
				"FIXME: token expiry compared in local time",
				"TODO: raise the bcrypt cost to 12 after the login latency work",
				"TODO(priya): rotate signing keys without logging everyone out",
			}},
		{"notify", []string{"email.go", "sms.go", "templates.go", "webhooks.go", "digest.go"},
			[]string{"Email", "Message", "Template", "Webhook", "Digest"}, 0.4, []string{
				"TODO: batch SMS sends per provider",
				"FIXME: webhook signature uses the old secret after rotation",
				"TODO: unsubscribe link in the digest footer",
			}},
	}
	// A verb as a method name, in a doc comment and in a log message.
	verbs := [][3]string{
		{"Get", "gets", "got"}, {"Update", "updates", "updated"}, {"Cancel", "cancels", "cancelled"},
		{"Sync", "syncs", "synced"}, {"Apply", "applies", "applied"}, {"Load", "loads", "loaded"},
		{"Render", "renders", "rendered"}, {"Send", "sends", "sent"}, {"Resolve", "resolves", "resolved"},
		{"Archive", "archives", "archived"}, {"Refresh", "refreshes", "refreshed"}, {"Lock", "locks", "locked"},
	}
	for _, p := range pkgs {
		for fi, file := range p.files {
			noun := p.nouns[fi]
			spaced := spacedWords(noun)
			var b strings.Builder
			fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"time\"\n)\n\n", p.name)
			fmt.Fprintf(&b, "var err%sNotFound = errors.New(\"%s: %s not found\")\n\n", noun, p.name, spaced)
			fmt.Fprintf(&b, "// %s is one %s as stored.\ntype %s struct {\n\tID        string\n\tAccountID string\n\tCreatedAt time.Time\n\tUpdatedAt time.Time\n\tVersion   int\n}\n\n",
				noun, spaced, noun)
			// Each verb at most once per file, as in real code.
			for _, vi := range g.r.Perm(len(verbs))[:g.between(5, 9)] {
				verb := verbs[vi]
				if g.chance(p.todo) {
					note := oneOf(g, common)
					if g.chance(0.6) {
						note = oneOf(g, p.notes)
					}
					fmt.Fprintf(&b, "// %s\n", note)
				}
				fmt.Fprintf(&b, "// %s%s %s the %s with the given ID.\n", verb[0], noun, verb[1], spaced)
				fmt.Fprintf(&b, "func (s *Service) %s%s(ctx context.Context, id string) (*%s, error) {\n", verb[0], noun, noun)
				fmt.Fprintf(&b, "\tif id == \"\" {\n\t\treturn nil, fmt.Errorf(\"%s: empty id\")\n\t}\n", p.name)
				if g.chance(0.5) {
					fmt.Fprintf(&b, "\tctx, cancel := context.WithTimeout(ctx, %d*time.Second)\n\tdefer cancel()\n", g.between(2, 15))
				}
				fmt.Fprintf(&b, "\trow, err := s.store.%s(ctx, id)\n\tif errors.Is(err, errNoRows) {\n\t\treturn nil, err%sNotFound\n\t}\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s %s %%s: %%w\", id, err)\n\t}\n",
					oneOf(g, []string{"Get", "GetForUpdate", "Fetch"}), noun, strings.ToLower(verb[0]), spaced)
				if g.chance(p.todo / 3) {
					fmt.Fprintf(&b, "\t// %s\n", oneOf(g, p.notes))
				}
				if g.chance(0.5) {
					b.WriteString("\trow.UpdatedAt = time.Now().UTC()\n\trow.Version++\n")
				}
				fmt.Fprintf(&b, "\ts.log.InfoContext(ctx, \"%s %s\", \"id\", id, \"version\", row.Version)\n\treturn row, nil\n}\n\n",
					spaced, verb[2])
			}
			put("shop/"+p.name+"/"+file, b.String())
		}
	}
}

func ordersCSV(g *gen, put func(rel, content string)) {
	customers := []string{
		"Harbor & Pine Ltd", "Nordlicht GmbH", "Blue Fern Studio", "Atlas Office Supply", "Kestrel Cafe Group",
		"Marlow & Daughters", "Quayside Bikes", "Oak Lane Dental", "Helios Print", "Brightwater Hotels",
		"Copperleaf Bakery", "Tidewater Marine", "Juniper Schools Trust", "Meridian Clinics", "Saffron Kitchen Co",
		"Ironbridge Joinery", "Pebble & Co", "Larkspur Florists", "Granite Peak Outdoors", "Northwind Logistics",
		"Cedar & Sage Spa", "Foxglove Books", "Silverline Taxis", "Aurora Yoga", "Bramble Farm Shop",
		"Lumen Architects", "Waverly Gym", "Osprey Sailing Club",
	}
	countries := []string{"NL", "DE", "FR", "BE", "IE", "ES", "IT", "DK", "AT", "SE"}
	statuses := []string{"shipped", "delivered", "delivered", "delivered", "cancelled", "refunded", "processing"}
	var b strings.Builder
	b.WriteString("order_id,placed_at,customer,country,amount_eur,status,items\n")
	t := time.Date(2026, 7, 1, 7, 0, 0, 0, time.UTC)
	id := 184000
	for range 240 {
		t = t.Add(time.Duration(g.between(600, 55000)) * time.Second)
		id += g.between(3, 60)
		cents := g.between(100, 90000)
		if g.chance(0.08) {
			cents = g.between(150000, 980000)
		}
		fmt.Fprintf(&b, "SO-2026-%d,%s,%s,%s,%d.%02d,%s,%d\n", id, t.Format(time.RFC3339), oneOf(g, customers),
			oneOf(g, countries), cents/100, cents%100, oneOf(g, statuses), g.between(1, 40))
	}
	put("data/orders-q3.csv", b.String())
}

func commitLog(g *gen, put func(rel, content string)) {
	type author struct {
		name  string
		areas []string
	}
	authors := []author{
		{"Mara Lind <mara.lind@shopfront.dev>", []string{"billing", "billing", "billing", "deps"}},
		{"Ines Carvalho <ines.carvalho@shopfront.dev>", []string{"billing", "shipping", "shipping"}},
		{"Jonas Brandt <jonas.brandt@shopfront.dev>", []string{"catalog", "catalog", "ci"}},
		{"Priya Natarajan <priya.natarajan@shopfront.dev>", []string{"auth", "auth", "notify"}},
		{"Kofi Mensah <kofi.mensah@shopfront.dev>", []string{"notify", "ci", "deps", "catalog"}},
		{"Tomás Ruiz <tomas.ruiz@shopfront.dev>", []string{"shipping", "billing", "catalog"}},
	}
	subjects := map[string][]string{
		"billing": {
			"round VAT per line item instead of per invoice",
			"credit notes keep the original invoice's exchange rate",
			"do not send a dunning reminder while a payment is pending",
			"reverse-charge note on B2B invoices inside the EU",
			"per-year invoice number sequence",
			"store the tax rate on each invoice line",
			"handle currencies without minor units",
			"refunds on the day of the charge no longer counted twice",
		},
		"shipping": {
			"cut-off times in the warehouse's time zone",
			"cache zone lookups per postcode prefix",
			"retry label creation when the carrier answers 429",
			"new carrier: PostNord parcel lockers",
		},
		"catalog": {
			"take the import lock before rebuilding category trees",
			"manual ordering of variants",
			"reject oversized images before upload",
			"price lists per customer group",
		},
		"auth": {
			"rotate signing keys with a grace period",
			"compare token expiry in UTC",
			"rate-limit password resets per account",
		},
		"notify": {
			"sign webhooks with the new secret after rotation",
			"batch SMS sends per provider",
			"unsubscribe link in the weekly digest",
		},
		"ci":   {"cache the module download", "run the linters on changed packages only", "pin the Node image"},
		"deps": {"bump pgx to v5.7.1", "bump golang.org/x/net to v0.30.0", "bump grpc to v1.67.1", "drop the unused yaml fork"},
	}
	bodies := []string{
		"Agreed with finance in the weekly sync; the old behaviour stays\n    available behind the flag for one more release.",
		"Found while reconciling October; see the thread in #finance-eng.",
		"No data migration needed: existing rows keep their current values.",
		"Behind the flag until the next release; staging has it on.",
		"Reported by support for two customers in Belgium.",
	}
	zone := time.FixedZone("", 3600)
	var b strings.Builder
	t := time.Date(2026, 11, 17, 17, 40, 0, 0, zone)
	pr := 1480
	for range 90 {
		t = t.Add(-time.Duration(g.between(20, 600)) * time.Minute)
		if g.chance(0.15) {
			pr--
			a := oneOf(g, authors)
			area := oneOf(g, a.areas)
			fmt.Fprintf(&b, "commit %s\nMerge: %s %s\nAuthor: %s\nDate:   %s\n\n    Merge pull request #%d from shopfront/%s\n\n",
				g.hex(40), g.hex(7), g.hex(7), a.name, t.Format("Mon Jan 2 15:04:05 2006 -0700"), pr,
				strings.ToLower(strings.Fields(a.name)[0])+"/"+area)
			continue
		}
		a := oneOf(g, authors)
		area := oneOf(g, a.areas)
		fmt.Fprintf(&b, "commit %s\nAuthor: %s\nDate:   %s\n\n    %s: %s\n", g.hex(40), a.name,
			t.Format("Mon Jan 2 15:04:05 2006 -0700"), area, oneOf(g, subjects[area]))
		if g.chance(0.4) {
			fmt.Fprintf(&b, "\n    %s\n", oneOf(g, bodies))
		}
		b.WriteString("\n")
	}
	put("history/commits.txt", b.String())
}

func settingsDump(g *gen, put func(rel, content string)) {
	var b strings.Builder
	b.WriteString("# effective settings of orders-api (env=staging), as loaded at 2026-11-18T05:59:12Z\n" +
		"# sources: defaults < config/base.yaml < config/staging.yaml < environment\n" +
		"service:\n  name: orders-api\n  env: staging\n  debug: true\n  region: eu-west-1\n" +
		"server:\n  listen: 0.0.0.0:8080\n  read_timeout: 15s\n  write_timeout: 15s\n  idle_timeout: 120s\n" +
		"  shutdown_timeout: 20s\n  max_header_bytes: 1048576\n  cors_origins:\n    - https://staging.shopfront.dev\n    - http://localhost:3000\n" +
		"database:\n  host: orders-db.staging.internal\n  port: 5432\n  name: orders\n  user: orders_app\n  password: \"********\"\n" +
		"  max_open_conns: 40\n  max_idle_conns: 10\n  conn_max_lifetime: 30m\n  statement_timeout: 60s\n  sslmode: require\n" +
		"cache:\n  redis_url: redis://cache.staging.internal:6379/2\n  default_ttl: 5m\n  dial_timeout: 2s\n  read_timeout: 500ms\n")
	b.WriteString("upstreams:\n")
	for _, name := range []string{"inventory-svc", "pricing-svc", "payments", "customers-svc", "shipping-svc", "tax-svc",
		"search-svc", "notify-svc", "fraud-svc", "loyalty-svc", "media-svc", "reviews-svc", "recommendations-svc", "warehouse-svc"} {
		timeout := oneOf(g, []string{"2s", "3s", "5s", "5s", "10s", "15s", "20s"})
		switch name {
		case "payments":
			timeout = "45s"
		case "tax-svc":
			timeout = "90s"
		}
		fmt.Fprintf(&b, "  - name: %s\n    url: http://%s.staging.internal:8080\n    timeout: %s\n    retries: %d\n    backoff: %dms\n"+
			"    circuit_breaker:\n      failure_ratio: 0.%d\n      open_for: %ds\n    pool_size: %d\n",
			name, strings.TrimSuffix(name, "-svc"), timeout, g.between(0, 4), 50*g.between(1, 8), g.between(2, 6), 10*g.between(1, 6), 8*g.between(1, 8))
	}
	b.WriteString("queues:\n")
	for _, q := range []string{"default", "mail", "documents", "search", "webhooks", "stock"} {
		fmt.Fprintf(&b, "  %s:\n    workers: %d\n    visibility_timeout: %ds\n    max_attempts: %d\n    dead_letter: %s-dlq\n",
			q, g.between(1, 8), 30*g.between(1, 4), g.between(3, 8), q)
	}
	b.WriteString("rate_limits:\n")
	for _, r := range []string{"GET /v1/orders", "GET /v1/orders/{id}", "POST /v1/orders", "PATCH /v1/orders/{id}",
		"POST /v1/checkout", "GET /v1/cart", "POST /v1/cart/items", "DELETE /v1/cart/items/{id}", "GET /v1/products",
		"GET /v1/products/{id}", "GET /v1/search", "POST /v1/sessions", "POST /v1/password-resets", "GET /v1/shipping/rates",
		"POST /v1/refunds", "GET /v1/invoices/{id}.pdf", "POST /v1/webhooks", "GET /v1/account", "PATCH /v1/account"} {
		fmt.Fprintf(&b, "  - route: %s\n    per_minute: %d\n    burst: %d\n    key: %s\n", r, 60*g.between(1, 20), 10*g.between(1, 10),
			oneOf(g, []string{"api_key", "ip", "account"}))
	}
	b.WriteString("scheduled:\n")
	for _, j := range []string{"reconcile_refunds", "expire_carts", "send_digests", "rebuild_search", "sync_stock",
		"purge_sessions", "retry_webhooks", "export_ledger", "rotate_logs", "refresh_exchange_rates"} {
		fmt.Fprintf(&b, "  %s:\n    cron: \"%d %s * * *\"\n    timeout: %dm\n    lock_ttl: %dm\n    enabled: %t\n",
			j, g.intn(60), oneOf(g, []string{"*", "*/2", "*/6", "3", "4"}), g.between(1, 30), g.between(5, 60), g.chance(0.85))
	}
	b.WriteString("payment_providers:\n")
	for _, pp := range []string{"stripe", "adyen", "klarna", "paypal"} {
		fmt.Fprintf(&b, "  %s:\n    enabled: %t\n    mode: sandbox\n    api_base: https://%s.sandbox.example\n    timeout: %ds\n"+
			"    webhook_path: /hooks/%s\n    capture: %s\n    currencies: [EUR, SEK, DKK, GBP]\n",
			pp, g.chance(0.8), pp, 5*g.between(1, 6), pp, oneOf(g, []string{"automatic", "manual"}))
	}
	b.WriteString("storage:\n  invoices_bucket: s3://shopfront-staging-invoices\n  media_bucket: s3://shopfront-staging-media\n" +
		"  signed_url_ttl: 15m\n  upload_max_bytes: 20971520\n  multipart_threshold: 8388608\n" +
		"http_client:\n  user_agent: orders-api/2026.11.3\n  max_idle_conns_per_host: 32\n  tls_handshake_timeout: 10s\n" +
		"  expect_continue_timeout: 1s\n  response_header_timeout: 30s\n")
	b.WriteString("smtp:\n  host: localhost\n  port: 1025\n  from: \"Shopfront <orders@shopfront.dev>\"\n  timeout: 10s\n" +
		"logging:\n  level: debug\n  format: json\n  sample_rate: 1.0\n  redact_fields: [password, card_number, iban]\n" +
		"tracing:\n  endpoint: http://otel-collector.staging.internal:4318\n  sample_ratio: 0.2\n  export_timeout: 30s\n" +
		"features:\n")
	for _, f := range []string{"new_tax_engine", "split_shipments", "express_checkout", "gift_cards", "saved_carts",
		"address_autocomplete", "loyalty_points", "invoice_pdf_v2", "b2b_price_lists", "klarna", "apple_pay", "order_edit_window"} {
		fmt.Fprintf(&b, "  %s: %t\n", f, g.chance(0.6))
	}
	put("config/effective-settings.yaml", b.String())
}

func moduleGraph(g *gen, put func(rel, content string)) {
	type module struct {
		path     string
		versions []string
	}
	pool := []module{
		{"golang.org/x/net", []string{"v0.21.0", "v0.25.0", "v0.30.0"}},
		{"golang.org/x/sys", []string{"v0.18.0", "v0.20.0", "v0.26.0"}},
		{"golang.org/x/text", []string{"v0.14.0", "v0.19.0"}},
		{"golang.org/x/crypto", []string{"v0.21.0", "v0.28.0"}},
		{"golang.org/x/sync", []string{"v0.8.0"}},
		{"golang.org/x/oauth2", []string{"v0.23.0"}},
		{"golang.org/x/time", []string{"v0.7.0"}},
		{"google.golang.org/protobuf", []string{"v1.33.0", "v1.34.2"}},
		{"google.golang.org/grpc", []string{"v1.62.1", "v1.67.1"}},
		{"google.golang.org/genproto/googleapis/rpc", []string{"v0.0.0-20241015192408-796eee8c2d53"}},
		{"github.com/go-chi/chi/v5", []string{"v5.1.0"}},
		{"github.com/jackc/pgx/v5", []string{"v5.7.1"}},
		{"github.com/jackc/pgpassfile", []string{"v1.0.0"}},
		{"github.com/jackc/puddle/v2", []string{"v2.2.2"}},
		{"github.com/redis/go-redis/v9", []string{"v9.6.1"}},
		{"github.com/google/uuid", []string{"v1.6.0"}},
		{"github.com/rs/zerolog", []string{"v1.33.0"}},
		{"github.com/spf13/cobra", []string{"v1.8.1"}},
		{"github.com/spf13/pflag", []string{"v1.0.5"}},
		{"github.com/prometheus/client_golang", []string{"v1.20.5"}},
		{"github.com/prometheus/common", []string{"v0.55.0", "v0.60.1"}},
		{"github.com/prometheus/procfs", []string{"v0.15.1"}},
		{"github.com/beorn7/perks", []string{"v1.0.1"}},
		{"github.com/cespare/xxhash/v2", []string{"v2.3.0"}},
		{"github.com/klauspost/compress", []string{"v1.17.9", "v1.17.11"}},
		{"github.com/aws/aws-sdk-go-v2", []string{"v1.32.2"}},
		{"github.com/aws/smithy-go", []string{"v1.22.0"}},
		{"go.opentelemetry.io/otel", []string{"v1.31.0"}},
		{"go.opentelemetry.io/otel/trace", []string{"v1.31.0"}},
		{"github.com/go-logr/logr", []string{"v1.4.2"}},
		{"github.com/shopspring/decimal", []string{"v1.4.0"}},
		{"github.com/segmentio/kafka-go", []string{"v0.4.47"}},
		{"github.com/pierrec/lz4/v4", []string{"v4.1.21"}},
		{"github.com/golang-jwt/jwt/v5", []string{"v5.2.1"}},
		{"github.com/hashicorp/golang-lru/v2", []string{"v2.0.7"}},
		{"github.com/sony/gobreaker", []string{"v1.0.0"}},
		{"github.com/mattn/go-isatty", []string{"v0.0.20"}},
		{"github.com/mattn/go-colorable", []string{"v0.1.13"}},
	}
	const root = "github.com/shopfront/api"
	var b strings.Builder
	// The root requires most of the pool at its newest version.
	for _, m := range pool {
		if g.chance(0.8) {
			fmt.Fprintf(&b, "%s %s@%s\n", root, m.path, m.versions[len(m.versions)-1])
		}
	}
	// Each module at each of its versions requires a few others, at any
	// version: that is how the older ones get in.
	for i, m := range pool {
		for _, v := range m.versions {
			for range g.between(0, 5) {
				d := pool[g.intn(len(pool))]
				if d.path == pool[i].path {
					continue
				}
				fmt.Fprintf(&b, "%s@%s %s@%s\n", m.path, v, d.path, oneOf(g, d.versions))
			}
		}
	}
	put("deps/module-graph.txt", b.String())
}

func pipelineLog(g *gen, put func(rel, content string)) {
	var b strings.Builder
	t := time.Date(2026, 11, 18, 10, 1, 7, 0, time.UTC)
	line := func(s string) {
		t = t.Add(time.Duration(g.between(1, 900)) * time.Millisecond)
		fmt.Fprintf(&b, "%s %s\n", t.Format("2006-01-02T15:04:05.0000000Z"), s)
	}
	line("##[group]Run actions/checkout@v4")
	line("Syncing repository: shopfront/web")
	line("HEAD is now at 4be1c07 cart: keep the coupon after a quantity change")
	line("##[endgroup]")
	line("##[group]Run npm ci")
	for range 40 {
		line(fmt.Sprintf("npm http fetch GET 200 https://registry.npmjs.org/%s %dms (cache %s)",
			oneOf(g, []string{"react", "react-dom", "zod", "date-fns", "undici", "typescript", "eslint", "mocha", "chai", "sinon", "ts-node", "prettier"}),
			g.between(3, 400), oneOf(g, []string{"hit", "hit", "stale", "miss"})))
	}
	line("added 912 packages, and audited 913 packages in 21s")
	line("##[endgroup]")
	line("##[group]Run npm run lint")
	for range 25 {
		line(fmt.Sprintf("/home/runner/work/web/web/src/%s.ts", oneOf(g, []string{"cart/cart", "billing/vat", "billing/invoice", "shipping/zones", "account/profile", "search/query"})))
		line(fmt.Sprintf("  %d:%d  warning  %s", g.between(3, 240), g.between(1, 60),
			oneOf(g, []string{"Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any",
				"'res' is assigned a value but never used  @typescript-eslint/no-unused-vars",
				"Missing return type on function  @typescript-eslint/explicit-function-return-type"})))
	}
	line("✖ 25 problems (0 errors, 25 warnings)")
	line("##[endgroup]")
	line("##[group]Run npm run specs")
	line("> web@3.18.0 specs")
	line("> mocha --require ts-node/register 'src/**/*.spec.ts'")
	line("")
	suites := []struct {
		name  string
		cases []string
	}{
		{"cart", []string{"adds an item", "merges duplicate items", "keeps the coupon after a quantity change", "drops sold-out items at checkout", "limits quantity to stock", "restores a saved cart"}},
		{"billing / vat", []string{"rounds half even", "applies reverse charge for EU B2B", "computes VAT per line item", "uses the reduced rate for books", "handles zero-rated exports"}},
		{"billing / invoice", []string{"numbers invoices per year", "totals match the sum of lines", "renders the PDF header", "credit note keeps the exchange rate", "shows the VAT summary table"}},
		{"shipping / zones", []string{"maps postcodes to zones", "respects the warehouse cut-off time", "falls back to the default zone", "excludes islands from next-day"}},
		{"shipping / rates", []string{"picks the cheapest carrier", "adds the fuel surcharge", "free shipping above the threshold"}},
		{"account / profile", []string{"updates the email", "rejects a weak password", "lists saved addresses", "deletes an address"}},
		{"search / query", []string{"parses quoted phrases", "ignores stop words", "boosts exact SKU matches", "pages through results"}},
		{"checkout", []string{"creates a payment intent", "retries a declined card once", "shows the order summary", "sends the confirmation email"}},
	}
	failing := map[string]int{"computes VAT per line item": 1, "totals match the sum of lines": 2, "respects the warehouse cut-off time": 3}
	passing := 0
	for _, ws := range []string{"shared", "account", "admin", "checkout-ui", "mobile-web", "storefront"} {
		line(fmt.Sprintf("  @shopfront/%s", ws))
		for _, s := range suites {
			line(fmt.Sprintf("    %s", s.name))
			for _, c := range s.cases {
				if n, ok := failing[c]; ok && ws == "storefront" {
					line(fmt.Sprintf("      %d) %s", n, c))
					continue
				}
				passing++
				if g.chance(0.2) {
					line(fmt.Sprintf("      ✔ %s (%dms)", c, g.between(40, 900)))
				} else {
					line(fmt.Sprintf("      ✔ %s", c))
				}
			}
			line("")
		}
	}
	line(fmt.Sprintf("  %d passing (%ds)", passing, g.between(8, 20)))
	line("  3 failing")
	line("")
	failure := func(n int, suite, name string, detail []string) {
		line(fmt.Sprintf("  %d) @shopfront/storefront", n))
		line(fmt.Sprintf("       %s", suite))
		line(fmt.Sprintf("       %s:", name))
		line("")
		for _, d := range detail {
			line(d)
		}
		line("")
	}
	failure(1, "billing / vat", "computes VAT per line item", []string{
		"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:", "",
		"104.49 !== 104.5", "", "      + expected - actual", "", "      -104.49", "      +104.5", "",
		"      at Context.<anonymous> (src/billing/vat.spec.ts:88:14)",
		"      at process.processImmediate (node:internal/timers:483:21)",
	})
	failure(2, "billing / invoice", "totals match the sum of lines", []string{
		"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:", "",
		"2318.06 !== 2318.07", "", "      + expected - actual", "", "      -2318.06", "      +2318.07", "",
		"      at Context.<anonymous> (src/billing/invoice.spec.ts:142:12)",
		"      at process.processImmediate (node:internal/timers:483:21)",
	})
	failure(3, "shipping / zones", "respects the warehouse cut-off time", []string{
		"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:", "",
		"'2026-11-19' !== '2026-11-20'", "", "      + expected - actual", "", "      -'2026-11-19'", "      +'2026-11-20'", "",
		"      at Context.<anonymous> (src/shipping/zones.spec.ts:61:12)",
		"      at process.processImmediate (node:internal/timers:483:21)",
	})
	line("##[error]Process completed with exit code 3.")
	line("##[endgroup]")
	line("Post job cleanup.")
	line("Cleaning up orphan processes")
	put("ci/pipeline-2291.log", b.String())
}

func accessLog(g *gen, put func(rel, content string)) {
	agents := []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
		"shopfront-android/5.12.0 (okhttp/4.12.0)",
	}
	pages := []string{"GET /api/v2/products/%d", "GET /api/v2/cart", "POST /api/v2/cart/items", "GET /api/v2/search?q=%s",
		"GET /api/v2/orders/%d", "GET /api/v2/orders/%d/invoice.pdf", "POST /api/v2/checkout", "GET /api/v2/shipping/rates?zone=%d",
		"GET /static/app.%s.js", "GET /api/v2/account"}
	words := []string{"linen", "mug", "socks", "lamp", "kettle", "tote", "gloves", "jar"}
	var b strings.Builder
	b.Grow(340 << 10)
	t := morning.Add(3 * time.Hour)
	for range 1500 {
		t = t.Add(g.ms(50, 2500))
		p := oneOf(g, pages)
		switch {
		case strings.Contains(p, "q=%s"):
			p = fmt.Sprintf(p, oneOf(g, words))
		case strings.Contains(p, "app.%s"):
			p = fmt.Sprintf(p, g.hex(8))
		case strings.Contains(p, "%d"):
			p = fmt.Sprintf(p, g.between(1000, 99999))
		}
		status, size, secs := 200, g.between(300, 24000), float64(g.between(3, 400))/1000
		x := g.intn(1000)
		switch {
		case strings.HasPrefix(p, "POST /api/v2/checkout") && x < 330:
			status, size, secs = oneOf(g, []int{502, 502, 504}), 166, float64(g.between(4900, 5100))/1000
		case strings.HasSuffix(p, "invoice.pdf") && x < 200:
			status, size = 500, 54
		case strings.HasPrefix(p, "GET /api/v2/search") && x < 70:
			status, size = 503, 97
		case x < 30:
			status, size = 404, 153
		case strings.HasPrefix(p, "POST") && x < 500:
			status = 201
		case strings.HasPrefix(p, "GET /static") && x < 700:
			status, size = 304, 0
		}
		fmt.Fprintf(&b, "%s - - [%s] \"%s HTTP/1.1\" %d %d \"https://shop.example/\" \"%s\" %.3f\n",
			g.ip(), t.Format("02/Jan/2006:15:04:05 -0700"), p, status, size, oneOf(g, agents), secs)
	}
	put("logs/access.log", b.String())
}

func latencyCSV(g *gen, put func(rel, content string)) {
	services := []struct {
		name string
		p50  int
	}{{"checkout", 140}, {"catalog", 45}, {"search", 90}, {"accounts", 60}, {"shipping", 75}, {"notify", 30}}
	var b strings.Builder
	b.WriteString("date,service,region,p50_ms,p95_ms,p99_ms,requests,errors\n")
	day := time.Date(2026, 9, 16, 0, 0, 0, 0, time.UTC)
	for d := range 64 {
		for _, s := range services {
			p50 := s.p50 + g.between(-s.p50/5, s.p50/5)
			p95 := p50*3 + g.between(0, p50)
			p99 := p95*2 + g.between(0, p95/2)
			// Only the planted days cross 900 ms.
			if s.name == "checkout" && (d == 21 || d == 22 || d == 57) || s.name == "search" && d == 40 {
				p99 = g.between(930, 1800)
			} else {
				p99 = min(p99, 890)
			}
			reqs := g.between(40000, 900000)
			fmt.Fprintf(&b, "%s,%s,eu-west-1,%d,%d,%d,%d,%d\n", day.AddDate(0, 0, d).Format(time.DateOnly), s.name,
				p50, p95, p99, reqs, reqs/g.between(300, 5000))
		}
	}
	put("data/latency-daily.csv", b.String())
}

func schemaSQL(g *gen, put func(rel, content string)) {
	type fk struct{ col, ref string }
	type table struct {
		name string
		fks  []fk
		cols []string
	}
	tables := []table{
		{"customers", nil, []string{"email text NOT NULL UNIQUE", "full_name text NOT NULL", "phone text", "locale text NOT NULL DEFAULT 'en'", "marketing_opt_in boolean NOT NULL DEFAULT false"}},
		{"addresses", []fk{{"customer_id", "customers"}}, []string{"line1 text NOT NULL", "line2 text", "postcode text NOT NULL", "city text NOT NULL", "country char(2) NOT NULL"}},
		{"products", nil, []string{"slug text NOT NULL UNIQUE", "title text NOT NULL", "description text", "brand text", "active boolean NOT NULL DEFAULT true"}},
		{"product_variants", []fk{{"product_id", "products"}}, []string{"sku text NOT NULL UNIQUE", "size text", "colour text", "weight_grams integer"}},
		{"categories", []fk{{"parent_id", "categories"}}, []string{"slug text NOT NULL UNIQUE", "title text NOT NULL", "position integer NOT NULL DEFAULT 0"}},
		{"product_categories", []fk{{"product_id", "products"}, {"category_id", "categories"}}, nil},
		{"price_lists", nil, []string{"name text NOT NULL", "currency char(3) NOT NULL", "customer_group text"}},
		{"prices", []fk{{"price_list_id", "price_lists"}, {"variant_id", "product_variants"}}, []string{"amount_minor bigint NOT NULL", "valid_from date NOT NULL", "valid_to date"}},
		{"warehouses", nil, []string{"code text NOT NULL UNIQUE", "city text NOT NULL", "time_zone text NOT NULL", "cutoff_local time NOT NULL"}},
		{"stock_levels", []fk{{"warehouse_id", "warehouses"}, {"variant_id", "product_variants"}}, []string{"on_hand integer NOT NULL", "reserved integer NOT NULL DEFAULT 0", "reorder_point integer NOT NULL"}},
		{"carts", []fk{{"customer_id", "customers"}}, []string{"token text NOT NULL UNIQUE", "expires_at timestamptz NOT NULL"}},
		{"cart_items", []fk{{"cart_id", "carts"}, {"variant_id", "product_variants"}}, []string{"quantity integer NOT NULL CHECK (quantity > 0)"}},
		{"orders", []fk{{"customer_id", "customers"}, {"shipping_address_id", "addresses"}}, []string{"number text NOT NULL UNIQUE", "status text NOT NULL", "currency char(3) NOT NULL", "total_minor bigint NOT NULL", "placed_at timestamptz NOT NULL"}},
		{"order_items", []fk{{"order_id", "orders"}, {"variant_id", "product_variants"}}, []string{"quantity integer NOT NULL", "unit_price_minor bigint NOT NULL", "vat_rate numeric(5,2) NOT NULL"}},
		{"payments", []fk{{"order_id", "orders"}}, []string{"provider text NOT NULL", "provider_ref text NOT NULL", "amount_minor bigint NOT NULL", "status text NOT NULL"}},
		{"refunds", []fk{{"payment_id", "payments"}, {"order_id", "orders"}}, []string{"amount_minor bigint NOT NULL", "reason text NOT NULL", "status text NOT NULL"}},
		{"invoices", []fk{{"order_id", "orders"}}, []string{"number text NOT NULL UNIQUE", "issued_on date NOT NULL", "exchange_rate numeric(12,6)"}},
		{"invoice_lines", []fk{{"invoice_id", "invoices"}, {"order_item_id", "order_items"}}, []string{"description text NOT NULL", "net_minor bigint NOT NULL", "vat_minor bigint NOT NULL"}},
		{"credit_notes", []fk{{"invoice_id", "invoices"}}, []string{"number text NOT NULL UNIQUE", "amount_minor bigint NOT NULL", "issued_on date NOT NULL"}},
		{"carriers", nil, []string{"code text NOT NULL UNIQUE", "name text NOT NULL", "tracking_url text"}},
		{"shipments", []fk{{"order_id", "orders"}, {"carrier_id", "carriers"}}, []string{"tracking_number text", "shipped_at timestamptz", "delivered_at timestamptz"}},
		{"shipment_events", []fk{{"shipment_id", "shipments"}}, []string{"code text NOT NULL", "description text", "occurred_at timestamptz NOT NULL"}},
		{"coupons", nil, []string{"code text NOT NULL UNIQUE", "percent_off integer", "amount_off_minor bigint", "expires_at timestamptz"}},
		{"coupon_redemptions", []fk{{"coupon_id", "coupons"}, {"order_id", "orders"}, {"customer_id", "customers"}}, []string{"redeemed_at timestamptz NOT NULL"}},
		{"users", nil, []string{"email text NOT NULL UNIQUE", "password_hash text NOT NULL", "last_login_at timestamptz"}},
		{"roles", nil, []string{"name text NOT NULL UNIQUE", "description text"}},
		{"user_roles", []fk{{"user_id", "users"}, {"role_id", "roles"}}, nil},
		{"sessions", []fk{{"user_id", "users"}}, []string{"token_hash text NOT NULL UNIQUE", "expires_at timestamptz NOT NULL", "ip inet"}},
		{"audit_events", []fk{{"user_id", "users"}}, []string{"action text NOT NULL", "resource text NOT NULL", "resource_id text NOT NULL", "payload jsonb"}},
		{"webhooks", nil, []string{"url text NOT NULL", "secret text NOT NULL", "events text[] NOT NULL"}},
		{"webhook_deliveries", []fk{{"webhook_id", "webhooks"}}, []string{"event text NOT NULL", "status_code integer", "attempts integer NOT NULL DEFAULT 0", "next_attempt_at timestamptz"}},
		{"email_messages", []fk{{"customer_id", "customers"}}, []string{"template text NOT NULL", "subject text NOT NULL", "sent_at timestamptz", "bounced boolean NOT NULL DEFAULT false"}},
	}
	// These stay without an index whatever the draw, so the question
	// always has an answer; the rest are indexed three times in four.
	unindexed := map[string]bool{"refunds.payment_id": true, "order_items.variant_id": true, "shipment_events.shipment_id": true}
	var b strings.Builder
	b.WriteString("-- schema of the orders database, dumped 2026-11-18\n-- PostgreSQL 16\n\nSET statement_timeout = 0;\nSET client_encoding = 'UTF8';\n\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "CREATE TABLE public.%s (\n    id bigserial PRIMARY KEY,\n", tb.name)
		for _, f := range tb.fks {
			null := " NOT NULL"
			if f.col == "parent_id" || f.col == "customer_id" && tb.name == "carts" {
				null = ""
			}
			action := oneOf(g, []string{"", " ON DELETE CASCADE", " ON DELETE RESTRICT", " ON DELETE SET NULL"})
			fmt.Fprintf(&b, "    %s bigint%s REFERENCES public.%s (id)%s,\n", f.col, null, f.ref, action)
		}
		for _, c := range tb.cols {
			fmt.Fprintf(&b, "    %s,\n", c)
		}
		b.WriteString("    created_at timestamptz NOT NULL DEFAULT now(),\n    updated_at timestamptz NOT NULL DEFAULT now()\n);\n\n")
		fmt.Fprintf(&b, "COMMENT ON TABLE public.%s IS '%s, owned by the %s team';\n\n", tb.name,
			strings.ReplaceAll(tb.name, "_", " "), oneOf(g, []string{"orders", "catalog", "billing", "platform"}))
	}
	for _, tb := range tables {
		for _, f := range tb.fks {
			if unindexed[tb.name+"."+f.col] || !g.chance(0.75) {
				continue
			}
			fmt.Fprintf(&b, "CREATE INDEX %s_%s_idx ON public.%s USING btree (%s);\n", tb.name, strings.TrimSuffix(f.col, "_id"), tb.name, f.col)
		}
	}
	b.WriteString("CREATE INDEX orders_placed_at_idx ON public.orders USING btree (placed_at);\n" +
		"CREATE INDEX webhook_deliveries_next_attempt_idx ON public.webhook_deliveries USING btree (next_attempt_at) WHERE status_code IS NULL;\n")
	put("db/schema.sql", b.String())
}

func inventoryCSV(g *gen, put func(rel, content string)) {
	items := []string{
		"Enamel camping mug 350 ml", "Merino hiking socks M", "Bamboo cutting board large", "Stainless water bottle 750 ml",
		"Canvas tote natural", "LED head torch 300 lm", "Ceramic pour-over dripper", "Linen tea towel set of 2",
		"Wool beanie charcoal", "Folding camp stool", "Beeswax food wraps 3-pack", "Cast iron pan 26 cm",
		"Glass storage jar 1 l", "Cotton apron olive", "Trail running gloves L", "Insulated lunch box",
		"Walnut serving tray", "Rain poncho adult", "Picnic blanket 140x170", "Copper measuring cups",
		"Oak pepper mill", "Hand-thrown bowl sand", "Duvet cover 200x220 grey", "Down pillow medium",
	}
	warehouses := []string{"AMS-1", "BER-2", "LYS-1", "MAD-1"}
	suppliers := []string{"Veldhuis BV", "Nordic Goods AB", "Atelier Roux", "Casa Lumbre SL", "Hartmann Textil", "Kiln & Co"}
	var b strings.Builder
	b.Grow(50 << 10)
	b.WriteString("sku,name,warehouse,on_hand,reserved,reorder_point,supplier,last_received\n")
	sku := 10400
	for range 620 {
		sku += g.between(1, 9)
		reorder := 10 * g.between(2, 12)
		onHand := reorder + g.between(5, 400)
		reserved := g.between(0, 30)
		if g.chance(0.09) {
			onHand = g.between(0, reorder)
			reserved = g.between(0, max(onHand/2, 1))
		}
		fmt.Fprintf(&b, "SF-%05d,%s,%s,%d,%d,%d,%s,%s\n", sku, oneOf(g, items), oneOf(g, warehouses), onHand, reserved, reorder,
			oneOf(g, suppliers), time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, g.between(0, 108)).Format(time.DateOnly))
	}
	put("data/inventory.csv", b.String())
}

func goroutineDump(g *gen, put func(rel, content string)) {
	var b strings.Builder
	b.WriteString("SIGQUIT: quit\nPC=0x47a1e1 m=0 sigcode=0\n\n")
	addr := func() string { return "0xc000" + g.hex(6) }
	id := 1
	next := func() int { id += g.between(1, 40); return id }
	// The lock holder: stuck in fsync for the whole hang.
	fmt.Fprintf(&b, "goroutine %d [syscall, 53 minutes]:\nsyscall.Syscall(0x4a, 0x9, 0x0, 0x0)\n\t/usr/local/go/src/syscall/syscall_linux.go:73 +0x25\n"+
		"syscall.Fsync(0x9)\n\t/usr/local/go/src/syscall/zsyscall_linux_amd64.go:423 +0x2a\n"+
		"internal/poll.(*FD).Fsync.func1(...)\n\t/usr/local/go/src/internal/poll/fd_fsync_posix.go:18\n"+
		"internal/poll.ignoringEINTR(...)\n\t/usr/local/go/src/internal/poll/fd_posix.go:74\n"+
		"internal/poll.(*FD).Fsync(%s)\n\t/usr/local/go/src/internal/poll/fd_fsync_posix.go:17 +0xf4\n"+
		"os.(*File).Sync(%s)\n\t/usr/local/go/src/os/file_posix.go:168 +0x4e\n"+
		"github.com/shopfront/ledger/store.(*Store).flush(%s)\n\t/src/ledger/store/store.go:288 +0x1b1\n"+
		"github.com/shopfront/ledger/store.(*Store).Append(%s, {0x1a2b3c0, %s}, {%s, 0x3, 0x4})\n\t/src/ledger/store/store.go:219 +0x2c5\n"+
		"github.com/shopfront/ledger/api.(*Handler).postEntries(%s, {0x1a31f28, %s}, %s)\n\t/src/ledger/api/entries.go:74 +0x1f2\n"+
		"net/http.HandlerFunc.ServeHTTP(...)\n\t/usr/local/go/src/net/http/server.go:2220 +0x29\n\n",
		next(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr())
	for i := range 26 {
		gid := next()
		switch {
		case i < 14:
			fmt.Fprintf(&b, "goroutine %d [sync.Mutex.Lock, %d minutes]:\ninternal/sync.runtime_SemacquireMutex(%s, 0x0, 0x1)\n\t/usr/local/go/src/runtime/sema.go:95 +0x25\n"+
				"internal/sync.(*Mutex).lockSlow(%s)\n\t/usr/local/go/src/internal/sync/mutex.go:149 +0x15d\n"+
				"internal/sync.(*Mutex).Lock(...)\n\t/usr/local/go/src/internal/sync/mutex.go:70\n"+
				"sync.(*Mutex).Lock(...)\n\t/usr/local/go/src/sync/mutex.go:46\n"+
				"github.com/shopfront/ledger/store.(*Store).Append(%s, {0x1a2b3c0, %s}, {%s, 0x1, 0x1})\n\t/src/ledger/store/store.go:212 +0x8e\n"+
				"github.com/shopfront/ledger/api.(*Handler).postEntries(%s, {0x1a31f28, %s}, %s)\n\t/src/ledger/api/entries.go:74 +0x1f2\n"+
				"net/http.HandlerFunc.ServeHTTP(...)\n\t/usr/local/go/src/net/http/server.go:2220 +0x29\n"+
				"net/http.serverHandler{...}.ServeHTTP({%s}, {0x1a31f28, %s}, %s)\n\t/usr/local/go/src/net/http/server.go:3210 +0x8e\n"+
				"net/http.(*conn).serve(%s, {0x1a33b50, %s})\n\t/usr/local/go/src/net/http/server.go:2092 +0x5d0\n"+
				"created by net/http.(*Server).Serve in goroutine 1\n\t/usr/local/go/src/net/http/server.go:3360 +0x485\n\n",
				gid, 52-i*3-g.intn(3), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr())
		case i < 18:
			fmt.Fprintf(&b, "goroutine %d [sync.RWMutex.RLock, %d minutes]:\nsync.runtime_SemacquireRWMutexR(%s, 0x0, 0x0)\n\t/usr/local/go/src/runtime/sema.go:100 +0x25\n"+
				"sync.(*RWMutex).RLock(...)\n\t/usr/local/go/src/sync/rwmutex.go:72\n"+
				"github.com/shopfront/ledger/store.(*Store).Balance(%s, {0x1a2b3c0, %s}, {%s, 0x8})\n\t/src/ledger/store/store.go:141 +0x65\n"+
				"github.com/shopfront/ledger/api.(*Handler).getBalance(%s, {0x1a31f28, %s}, %s)\n\t/src/ledger/api/balance.go:31 +0xd4\n"+
				"net/http.HandlerFunc.ServeHTTP(...)\n\t/usr/local/go/src/net/http/server.go:2220 +0x29\n"+
				"net/http.(*conn).serve(%s, {0x1a33b50, %s})\n\t/usr/local/go/src/net/http/server.go:2092 +0x5d0\n"+
				"created by net/http.(*Server).Serve in goroutine 1\n\t/usr/local/go/src/net/http/server.go:3360 +0x485\n\n",
				gid, g.between(2, 30), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr())
		case i < 23:
			fmt.Fprintf(&b, "goroutine %d [IO wait]:\ninternal/poll.runtime_pollWait(0x7f3b%s, 0x72)\n\t/usr/local/go/src/runtime/netpoll.go:351 +0x85\n"+
				"internal/poll.(*pollDesc).wait(%s, 0x72, 0x0)\n\t/usr/local/go/src/internal/poll/fd_poll_runtime.go:84 +0x27\n"+
				"internal/poll.(*FD).Read(%s, {%s, 0x1000, 0x1000})\n\t/usr/local/go/src/internal/poll/fd_unix.go:165 +0x27a\n"+
				"net.(*conn).Read(%s, {%s, 0x1000, 0x1000})\n\t/usr/local/go/src/net/net.go:194 +0x45\n"+
				"net/http.(*connReader).Read(%s, {%s, 0x1000, 0x1000})\n\t/usr/local/go/src/net/http/server.go:798 +0x14a\n"+
				"bufio.(*Reader).fill(%s)\n\t/usr/local/go/src/bufio/bufio.go:110 +0x103\n"+
				"created by net/http.(*Server).Serve in goroutine 1\n\t/usr/local/go/src/net/http/server.go:3360 +0x485\n\n",
				gid, g.hex(6), addr(), addr(), addr(), addr(), addr(), addr(), addr(), addr())
		default:
			fmt.Fprintf(&b, "goroutine %d [select, %d minutes]:\ndatabase/sql.(*DB).connectionOpener(%s, {0x1a33b50, %s})\n\t/usr/local/go/src/database/sql/sql.go:1253 +0x87\n"+
				"created by database/sql.OpenDB in goroutine 1\n\t/usr/local/go/src/database/sql/sql.go:833 +0x130\n\n",
				gid, g.between(53, 400), addr(), addr())
		}
	}
	put("logs/goroutines.txt", b.String())
}

func auditLog(g *gen, put func(rel, content string)) {
	actors := []string{"j.okafor", "m.lind", "s.duarte", "r.haddad", "ops-bot"}
	resources := []string{"coupon", "product", "price_list", "customer", "webhook", "order"}
	actions := []string{"update", "update", "update", "create", "create", "login", "export"}
	var b strings.Builder
	b.Grow(120 << 10)
	t := time.Date(2026, 11, 17, 7, 30, 0, 0, time.UTC)
	for i := range 720 {
		t = t.Add(time.Duration(g.between(5, 150)) * time.Second)
		actor, action, res := oneOf(g, actors), oneOf(g, actions), oneOf(g, resources)
		x := g.intn(100)
		switch {
		case i >= 390 && i < 490 && x < 55: // the afternoon clean-up
			actor, action, res = "j.okafor", "delete", "coupon"
		case x < 3:
			action = "delete"
			res = oneOf(g, []string{"product", "webhook", "price_list"})
		}
		rid := fmt.Sprintf("%s-%d", strings.ToUpper(res[:3]), g.between(1000, 9999))
		reason := ""
		if action == "delete" {
			reason = fmt.Sprintf(",\"reason\":%q", oneOf(g, []string{"expired", "duplicate", "campaign ended", "requested by marketing"}))
		}
		fmt.Fprintf(&b, "{\"ts\":\"%s\",\"actor\":\"%s\",\"action\":\"%s\",\"resource\":\"%s\",\"id\":\"%s\",\"ip\":\"%s\",\"source\":\"%s\"%s}\n",
			t.Format(time.RFC3339), actor, action, res, rid, g.ip(), oneOf(g, []string{"admin-ui", "admin-ui", "api", "cli"}), reason)
	}
	put("logs/audit.jsonl", b.String())
}

func flagsJSON(g *gen, put func(rel, content string)) {
	flags := []struct{ key, owner, desc string }{
		{"checkout.new_tax_engine", "billing", "Compute VAT with the new per-line engine"},
		{"checkout.express", "checkout", "One-page express checkout for returning customers"},
		{"checkout.klarna", "checkout", "Offer Klarna pay-later at checkout"},
		{"checkout.apple_pay", "checkout", "Apple Pay button on product and cart pages"},
		{"checkout.address_autocomplete", "checkout", "Autocomplete addresses from the postcode"},
		{"cart.saved_carts", "cart", "Keep carts across devices for signed-in customers"},
		{"cart.bundle_discounts", "cart", "Automatic discounts for product bundles"},
		{"catalog.manual_variant_order", "catalog", "Merchandisers order variants by hand"},
		{"catalog.customer_price_lists", "catalog", "Price lists per customer group"},
		{"catalog.image_cdn_v2", "catalog", "Serve product images from the new CDN"},
		{"search.semantic_ranking", "search", "Rank results with the embedding model"},
		{"search.typo_tolerance", "search", "Tolerate one typo per word"},
		{"search.sku_boost", "search", "Boost exact SKU matches to the top"},
		{"shipping.split_shipments", "shipping", "Ship items from different warehouses separately"},
		{"shipping.parcel_lockers", "shipping", "Offer parcel lockers as a delivery option"},
		{"shipping.carbon_estimate", "shipping", "Show an estimated CO2 figure per delivery option"},
		{"billing.invoice_pdf_v2", "billing", "New invoice PDF layout"},
		{"billing.per_year_numbering", "billing", "Invoice numbers restart every year"},
		{"billing.reverse_charge_note", "billing", "Reverse-charge wording on EU B2B invoices"},
		{"account.passkeys", "identity", "Sign in with passkeys"},
		{"account.order_edit_window", "orders", "Customers can edit an order for 30 minutes"},
		{"account.gift_cards", "orders", "Sell and redeem gift cards"},
		{"loyalty.points", "loyalty", "Earn points on every order"},
		{"loyalty.tier_badges", "loyalty", "Show the customer's tier in the header"},
		{"notify.sms_batching", "notify", "Batch SMS sends per provider"},
		{"notify.weekly_digest", "notify", "Weekly digest email of new arrivals"},
		{"notify.webhook_signing_v2", "notify", "Sign webhooks with the rotated secret"},
		{"ops.read_replica_reports", "platform", "Run reports against the read replica"},
		{"ops.rate_limit_v2", "platform", "Token-bucket rate limits per API key"},
		{"ops.maintenance_banner", "platform", "Show the maintenance banner"},
		{"reviews.photo_uploads", "reviews", "Customers can attach photos to reviews"},
		{"reviews.verified_badge", "reviews", "Badge on reviews from verified buyers"},
		{"recs.cart_cross_sell", "recommendations", "Cross-sell strip in the cart"},
		{"recs.recently_viewed", "recommendations", "Recently viewed products on the home page"},
	}
	drift := map[string]bool{"checkout.klarna": true, "search.semantic_ranking": true, "billing.per_year_numbering": true, "ops.rate_limit_v2": true}
	var b strings.Builder
	b.WriteString("{\n  \"version\": 412,\n  \"exported_at\": \"2026-11-18T07:12:40Z\",\n  \"flags\": [\n")
	for i, f := range flags {
		staging := g.chance(0.7)
		prod := staging && g.chance(0.6)
		if drift[f.key] {
			staging, prod = false, true
		}
		rollout := 0
		if prod {
			rollout = oneOf(g, []int{5, 10, 25, 50, 100, 100, 100})
		}
		comma, stagingRollout := ",", 0
		if i == len(flags)-1 {
			comma = ""
		}
		if staging {
			stagingRollout = 100
		}
		fmt.Fprintf(&b, "    {\n      \"key\": %q,\n      \"owner\": %q,\n      \"description\": %q,\n      \"environments\": {\n"+
			"        \"production\": { \"enabled\": %t, \"rollout\": %d },\n        \"staging\": { \"enabled\": %t, \"rollout\": %d }\n      },\n"+
			"      \"updated_at\": \"%s\",\n      \"updated_by\": %q\n    }%s\n",
			f.key, f.owner, f.desc, prod, rollout, staging, stagingRollout,
			time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(g.between(0, 78*24*60))*time.Minute).Format(time.RFC3339),
			oneOf(g, []string{"m.lind", "j.okafor", "p.natarajan", "k.mensah", "t.ruiz"}), comma)
	}
	b.WriteString("  ]\n}\n")
	put("config/flags.json", b.String())
}

func refundSource(g *gen, put func(rel, content string)) {
	var b strings.Builder
	b.WriteString(`// Package payments talks to the payment providers and keeps our record of
// charges and refunds in step with theirs.
package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/shopfront/api/money"
	"github.com/shopfront/api/orders"
)

// ErrRefundTooLarge means the requested amount exceeds what is left to
// refund on the payment.
var ErrRefundTooLarge = errors.New("payments: refund exceeds the refundable amount")

// ErrPaymentNotSettled means the provider has not settled the charge yet;
// a refund would fail there, so we void the authorisation instead.
var ErrPaymentNotSettled = errors.New("payments: payment not settled")

// RefundRequest is what the support tool and the returns flow send us.
type RefundRequest struct {
	OrderID     string
	PaymentID   string
	Amount      money.Amount // zero means "whatever is left"
	Reason      ReasonCode
	RequestedBy string
	// IdempotencyKey makes a retried request return the first result
	// instead of refunding twice.
	IdempotencyKey string
}

// Refund is our record of one refund.
type Refund struct {
	ID          string
	PaymentID   string
	Amount      money.Amount
	Reason      ReasonCode
	Status      RefundStatus
	ProviderRef string
	CreatedAt   time.Time
}

// RefundStatus follows the provider's lifecycle.
type RefundStatus string

const (
	RefundPending   RefundStatus = "pending"
	RefundSucceeded RefundStatus = "succeeded"
	RefundFailed    RefundStatus = "failed"
	RefundVoided    RefundStatus = "voided"
)

// ProcessRefund refunds all or part of a payment. It is safe to call twice
// with the same idempotency key.
func (s *Service) ProcessRefund(ctx context.Context, req RefundRequest) (*Refund, error) {
	if req.IdempotencyKey == "" {
		return nil, errors.New("payments: refund without an idempotency key")
	}
	if prev, err := s.store.RefundByKey(ctx, req.IdempotencyKey); err == nil {
		return prev, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("looking up idempotency key: %w", err)
	}

	tx, err := s.store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	pay, err := tx.PaymentForUpdate(ctx, req.PaymentID)
	if err != nil {
		return nil, fmt.Errorf("loading payment %s: %w", req.PaymentID, err)
	}
	if pay.OrderID != req.OrderID {
		return nil, fmt.Errorf("payments: payment %s does not belong to order %s", pay.ID, req.OrderID)
	}

	refunded, err := tx.RefundedTotal(ctx, pay.ID)
	if err != nil {
		return nil, err
	}
	left := pay.Amount.Sub(refunded)
	amount := req.Amount
	if amount.IsZero() {
		amount = left
	}
	if amount.IsNegative() || amount.IsZero() {
		return nil, fmt.Errorf("payments: nothing to refund on %s", pay.ID)
	}
	if amount.GreaterThan(left) {
		return nil, fmt.Errorf("%w: asked %s, %s left", ErrRefundTooLarge, amount, left)
	}

	r := &Refund{
		ID:        s.ids.New("rf"),
		PaymentID: pay.ID,
		Amount:    amount,
		Reason:    req.Reason,
		Status:    RefundPending,
		CreatedAt: s.clock.Now().UTC(),
	}

	// An authorisation that was never captured is voided, not refunded:
	// the customer sees the hold disappear instead of a credit days later.
	if !pay.Settled {
		if !amount.Equal(pay.Amount) {
			return nil, fmt.Errorf("%w: partial refund of an unsettled payment", ErrPaymentNotSettled)
		}
		if err := s.provider(pay.Provider).Void(ctx, pay.ProviderRef); err != nil {
			return nil, fmt.Errorf("voiding %s: %w", pay.ProviderRef, err)
		}
		r.Status = RefundVoided
	} else {
		ref, err := s.provider(pay.Provider).Refund(ctx, pay.ProviderRef, amount, req.IdempotencyKey)
		switch {
		case errors.Is(err, ErrProviderTimeout):
			// The provider may still act on it; keep it pending and let
			// the reconciler pick up the outcome.
			slog.WarnContext(ctx, "refund timed out at provider", "payment", pay.ID, "refund", r.ID)
		case err != nil:
			r.Status = RefundFailed
			slog.ErrorContext(ctx, "refund failed", "payment", pay.ID, "err", err)
		default:
			r.ProviderRef = ref
			r.Status = RefundSucceeded
		}
	}

	if err := tx.InsertRefund(ctx, r, req.IdempotencyKey, req.RequestedBy); err != nil {
		return nil, err
	}
	if r.Status == RefundSucceeded || r.Status == RefundVoided {
		if amount.Equal(left) {
			if err := tx.SetOrderStatus(ctx, req.OrderID, orders.StatusRefunded); err != nil {
				return nil, err
			}
		} else if err := tx.SetOrderStatus(ctx, req.OrderID, orders.StatusPartiallyRefunded); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if r.Status == RefundSucceeded && req.Reason.NotifiesCustomer() {
		s.events.Publish(ctx, "refund.succeeded", r.ID)
	}
	return r, nil
}

// RefundsForOrder lists an order's refunds, newest first, with the amount
// still refundable on each of its payments.
func (s *Service) RefundsForOrder(ctx context.Context, orderID string) ([]Refund, map[string]money.Amount, error) {
	pays, err := s.store.PaymentsForOrder(ctx, orderID)
	if err != nil {
		return nil, nil, fmt.Errorf("listing payments of %s: %w", orderID, err)
	}
	var all []Refund
	left := make(map[string]money.Amount, len(pays))
	for _, p := range pays {
		rs, err := s.store.RefundsForPayment(ctx, p.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("listing refunds of %s: %w", p.ID, err)
		}
		refunded := money.Zero(p.Amount.Currency())
		for _, r := range rs {
			if r.Status == RefundSucceeded || r.Status == RefundVoided || r.Status == RefundPending {
				refunded = refunded.Add(r.Amount)
			}
		}
		left[p.ID] = p.Amount.Sub(refunded)
		all = append(all, rs...)
	}
	slices.SortFunc(all, func(a, b Refund) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return all, left, nil
}

// ReconcilePending asks the providers about refunds still pending after
// a timeout and records what they say. It runs every few minutes; a refund
// the provider never heard of is marked failed after a day.
func (s *Service) ReconcilePending(ctx context.Context) (int, error) {
	pending, err := s.store.RefundsByStatus(ctx, RefundPending, 200)
	if err != nil {
		return 0, fmt.Errorf("listing pending refunds: %w", err)
	}
	done := 0
	for _, r := range pending {
		pay, err := s.store.Payment(ctx, r.PaymentID)
		if err != nil {
			slog.ErrorContext(ctx, "reconcile: loading payment", "refund", r.ID, "err", err)
			continue
		}
		status, ref, err := s.provider(pay.Provider).RefundStatus(ctx, pay.ProviderRef, r.ID)
		switch {
		case errors.Is(err, ErrNotFound) && s.clock.Since(r.CreatedAt) > 24*time.Hour:
			status = RefundFailed
		case err != nil:
			slog.WarnContext(ctx, "reconcile: provider status", "refund", r.ID, "err", err)
			continue
		}
		if status == RefundPending {
			continue
		}
		if err := s.store.SetRefundStatus(ctx, r.ID, status, ref); err != nil {
			return done, fmt.Errorf("recording refund %s: %w", r.ID, err)
		}
		done++
	}
	return done, nil
}

// ReasonCode is why a refund was made; finance reports group by it.
type ReasonCode string

// The reason codes, with whether the customer gets an email.
const (
`)
	reasons := []string{"damaged_in_transit", "wrong_item", "late_delivery", "changed_mind", "duplicate_charge",
		"price_adjustment", "goodwill", "missing_parts", "size_exchange", "fraud_suspected", "cancelled_before_dispatch", "warranty"}
	for _, r := range reasons {
		fmt.Fprintf(&b, "\t// Reason%s is reported by %s.\n\tReason%s ReasonCode = %q\n", camel(r),
			oneOf(g, []string{"the returns flow", "support", "the fraud team", "finance"}), camel(r), r)
	}
	b.WriteString(")\n\nvar notifying = map[ReasonCode]bool{\n")
	for _, r := range reasons {
		fmt.Fprintf(&b, "\tReason%s: %t,\n", camel(r), r != "fraud_suspected" && g.chance(0.75))
	}
	b.WriteString("}\n\n// NotifiesCustomer says whether a refund for this reason is emailed.\nfunc (c ReasonCode) NotifiesCustomer() bool { return notifying[c] }\n")
	put("payments/refund.go", b.String())
}

// spacedWords turns CamelCase into lower-case words: "CreditNote" is
// "credit note".
func spacedWords(s string) string {
	var b strings.Builder
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// camel turns snake_case into CamelCase for generated identifiers.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}
