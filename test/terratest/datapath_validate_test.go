package terratest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gruntwork-io/terratest/modules/random"
	"github.com/gruntwork-io/terratest/modules/retry"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The validate stage of the data path, written only against a deployment's endpoint outputs, so the same
// checks run against the local rehearsal (TestRehearsalDataPath) and, later, against a real Aurora + RDS
// Proxy deployment: feed it the read/write and read-only proxy endpoints from `terraform output -json`.

// Endpoint is what a client needs to reach one proxy endpoint. The JSON names are those of
// `rehearse outputs --json` (and of the Terraform outputs a real deployment would map onto them).
type Endpoint struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Database string `json:"database"`
	User     string `json:"user"`
	// Password auth: the rehearsal's app password, or on AWS a Secrets Manager secret or an IAM auth token
	// (`aws rds generate-db-auth-token`, valid 15 minutes) that the AWS suite generates and passes in. This
	// package deliberately does not build IAM tokens itself (that would add feature/rds/auth as a dependency).
	Password string `json:"password"`
	// CAFile: the PEM bundle the server certificate is verified against (the rehearsal's CA, or the
	// Amazon root CAs for RDS Proxy). Connections use sslmode=verify-full.
	CAFile string `json:"ca_file"`
	// IAMRegion: set for IAM-authenticated deployments; then Password must hold a token for that region.
	IAMRegion string `json:"iam_region,omitempty"`
}

// Endpoints are a deployment's outputs the validate stage needs.
type Endpoints struct {
	ReadWrite Endpoint `json:"read_write"`
	ReadOnly  Endpoint `json:"read_only"`
	// ExpectedReaders: readers behind the read-only endpoint whose server addresses inet_server_addr()
	// reveals. Above 1, reads over fresh connections must reach more than one of them. Set 0 for real
	// Aurora behind RDS Proxy, where the addresses are the proxy's business, to skip that check.
	ExpectedReaders int `json:"expected_readers"`
}

const (
	validateConnectTimeout = 5 * time.Second
	validateQueryTimeout   = 10 * time.Second
	// A real Aurora reader lags the writer by milliseconds to seconds; the rehearsal's replication is synchronous.
	replicationRetries = 20
	replicationSleep   = 500 * time.Millisecond
	// Fresh concurrent connections used to see how reads spread over the readers.
	spreadConnections = 12
)

// connConfig is the pgx configuration of e; tls=false asks for a plain-text connection (sslmode=disable).
func connConfig(e Endpoint, tls bool) (*pgx.ConnConfig, error) {
	if e.Password == "" {
		if e.IAMRegion != "" {
			return nil, fmt.Errorf("endpoint %s:%d uses IAM auth in %s: pass a token from `aws rds generate-db-auth-token` as its password", e.Host, e.Port, e.IAMRegion)
		}
		return nil, fmt.Errorf("endpoint %s:%d has no password", e.Host, e.Port)
	}
	ssl := "sslmode=disable"
	if tls {
		if e.CAFile == "" {
			return nil, fmt.Errorf("endpoint %s:%d has no ca_file for verify-full", e.Host, e.Port)
		}
		ssl = "sslmode=verify-full sslrootcert='" + strings.ReplaceAll(e.CAFile, "'", `\'`) + "'"
	}
	dsn := fmt.Sprintf("host=%s port=%d dbname=%s user=%s %s connect_timeout=%d application_name=terratest",
		e.Host, e.Port, e.Database, e.User, ssl, int(validateConnectTimeout/time.Second))
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	// Set directly, so no quoting of the password in the connection string is needed.
	cfg.Password = e.Password
	// No named prepared statements: behind a transaction-pooling proxy (PgBouncer here, RDS Proxy on AWS,
	// where they would pin the connection) the next transaction may run on another server connection.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return cfg, nil
}

// connect opens a fresh TLS (verify-full) connection to e, closed when the (sub)test ends.
func connect(t *testing.T, e Endpoint) *pgx.Conn {
	t.Helper()
	cfg, err := connConfig(e, true)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), validateConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoErrorf(t, err, "connecting to %s:%d with sslmode=verify-full", e.Host, e.Port)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func queryCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), validateQueryTimeout)
}

func inRecovery(t *testing.T, e Endpoint) bool {
	t.Helper()
	ctx, cancel := queryCtx()
	defer cancel()
	var r bool
	require.NoError(t, connect(t, e).QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&r))
	return r
}

// markerCount counts rows with marker in the test table through e.
func markerCount(t *testing.T, e Endpoint, marker string) (int, error) {
	t.Helper()
	ctx, cancel := queryCtx()
	defer cancel()
	var n int
	err := connect(t, e).QueryRow(ctx, "SELECT count(*)::int FROM terratest_datapath WHERE marker = $1", marker).Scan(&n)
	return n, err
}

// validateDataPath checks the data path behind the read/write and read-only endpoints.
func validateDataPath(t *testing.T, endpoints Endpoints) {
	rw, ro := endpoints.ReadWrite, endpoints.ReadOnly
	marker := "terratest-" + strings.ToLower(random.UniqueId())

	// Through the read/write endpoint, once: the table the checks below write to and read from.
	{
		ctx, cancel := queryCtx()
		defer cancel()
		_, err := connect(t, rw).Exec(ctx, "CREATE TABLE IF NOT EXISTS terratest_datapath (marker text PRIMARY KEY, written_at timestamptz NOT NULL DEFAULT now())")
		require.NoError(t, err, "creating the test table through the read/write endpoint")
	}

	checks := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"read_write/is_the_writer", func(t *testing.T) {
			assert.False(t, inRecovery(t, rw), "pg_is_in_recovery() through the read/write endpoint")
		}},
		{"read_write/accepts_a_write_and_reads_it_back", func(t *testing.T) {
			ctx, cancel := queryCtx()
			defer cancel()
			conn := connect(t, rw)
			tag, err := conn.Exec(ctx, "INSERT INTO terratest_datapath (marker) VALUES ($1)", marker)
			require.NoError(t, err)
			require.EqualValues(t, 1, tag.RowsAffected())
			var got string
			require.NoError(t, conn.QueryRow(ctx, "SELECT marker FROM terratest_datapath WHERE marker = $1", marker).Scan(&got))
			assert.Equal(t, marker, got)
		}},
		{"read_only/is_a_reader", func(t *testing.T) {
			assert.True(t, inRecovery(t, ro), "pg_is_in_recovery() through the read-only endpoint")
		}},
		{"read_only/refuses_a_write_with_25006", func(t *testing.T) {
			ctx, cancel := queryCtx()
			defer cancel()
			_, err := connect(t, ro).Exec(ctx, "INSERT INTO terratest_datapath (marker) VALUES ($1)", marker+"-ro")
			var pgErr *pgconn.PgError
			require.Truef(t, errors.As(err, &pgErr), "a write through the read-only endpoint must fail with a server error, got %v", err)
			assert.Equal(t, "25006", pgErr.Code, "SQLSTATE read_only_sql_transaction: %s", pgErr.Message)
		}},
		{"read_only/sees_the_row_written_through_read_write", func(t *testing.T) {
			// Bounded: synchronous here, a little lag on a real Aurora reader.
			retry.DoWithRetry(t, "row visible through the read-only endpoint", replicationRetries, replicationSleep, func() (string, error) {
				n, err := markerCount(t, ro, marker)
				if err != nil {
					return "", err
				}
				if n != 1 {
					return "", fmt.Errorf("marker %s not (yet) visible on the reader", marker)
				}
				return "visible", nil
			})
		}},
		{"read_only/spreads_fresh_connections_over_readers", func(t *testing.T) {
			if endpoints.ExpectedReaders <= 1 {
				t.Skipf("expected_readers=%d: server addresses are hidden or there is one reader", endpoints.ExpectedReaders)
			}
			writerAddr := serverAddr(t, rw)
			addrs := readerAddrs(t, ro, spreadConnections)
			assert.Greater(t, len(addrs), 1, "reads over %d fresh connections reached %v", spreadConnections, addrs)
			assert.LessOrEqual(t, len(addrs), endpoints.ExpectedReaders, "more servers than readers: %v", addrs)
			assert.NotContains(t, addrs, writerAddr, "a read through the read-only endpoint reached the writer")
		}},
		{"read_write/refuses_plain_text", func(t *testing.T) { assertPlainTextRefused(t, rw) }},
		{"read_only/refuses_plain_text", func(t *testing.T) { assertPlainTextRefused(t, ro) }},
	}
	// In order: the reader checks rely on the row the read/write check wrote.
	for _, c := range checks {
		t.Run(c.name, c.check)
	}
}

func serverAddr(t *testing.T, e Endpoint) string {
	t.Helper()
	ctx, cancel := queryCtx()
	defer cancel()
	var addr string
	require.NoError(t, connect(t, e).QueryRow(ctx, "SELECT host(inet_server_addr())").Scan(&addr))
	return addr
}

// readerAddrs opens n fresh connections at once (each needs its own server connection while it
// sleeps) and returns the distinct server addresses that answered.
func readerAddrs(t *testing.T, e Endpoint, n int) map[string]int {
	t.Helper()
	cfg, err := connConfig(e, true)
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		addrs = map[string]int{}
		errs  []error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := queryCtx()
			defer cancel()
			conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
			if err == nil {
				defer conn.Close(context.Background())
				var addr string
				var rec bool
				err = conn.QueryRow(ctx, "SELECT host(inet_server_addr()), pg_is_in_recovery() FROM pg_sleep(0.1)").Scan(&addr, &rec)
				if err == nil && !rec {
					err = fmt.Errorf("%s answered the read-only endpoint but is not in recovery", addr)
				}
				if err == nil {
					mu.Lock()
					addrs[addr]++
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return addrs
}

// assertPlainTextRefused: a client that does not use TLS must not get in (RDS Proxy with RequireTLS).
func assertPlainTextRefused(t *testing.T, e Endpoint) {
	t.Helper()
	cfg, err := connConfig(e, false)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), validateConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		_ = conn.Close(context.Background())
	}
	if assert.Errorf(t, err, "a plain-text (sslmode=disable) connection to %s:%d was accepted", e.Host, e.Port) {
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "refused by a timeout rather than by the endpoint")
		t.Logf("refused as it should be: %v", err)
	}
}
