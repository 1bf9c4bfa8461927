-- Names that break hand-made JSON: quotes, backslashes, control characters, non-UTF-8 bytes; plus
-- the NVTX cases the chrome trace must handle: a range still open at the end of the capture, a
-- start/end range that ends on another thread, overlapping start/end ranges, a start before 0.
-- One rank: pid 100 on device 0 (globalPid 100 << 24), threads 101 and 102.
INSERT INTO StringIds VALUES
  (1, 'kernel<"quoted">(\path\to, 	tab)'),
  (2, 'ctl' || char(1) || char(31) || char(10) || 'end'),
  (3, CAST(X'626164FFFE75746638' AS TEXT)),
  (4, 'cudaLaunchKernel_v7000'),
  (5, 'main "thread" \ 1'),
  (6, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
  (7, 'My"Domain'),
  (8, 'registered \ "range"');
INSERT INTO PROCESSES VALUES (1677721600, 100, 'py"thon');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid, demangledName, shortName) VALUES
  (1000, 2000, 0, 7, 11, 1677721600, 1, 1),
  (2500, 3000, 0, 7, 12, 1677721600, 2, 2),
  (3000, 3500, 0, 7, 13, 1677721600, 3, 3),
  (-500, 700, 0, 20, 14, 1677721600, 6, 6),
  (4000, 4200, 0, 20, 15, 1677721600, 6, 6);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL DEFAULT 0,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL DEFAULT 0);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES
  (900, 950, 1677721701, 11, 4), (2400, 2450, 1677721701, 12, 4), (2900, 2950, 1677721701, 13, 4),
  (3900, 3950, 1677721701, 15, 4), (5000, 5100, 1677721701, 99, 4);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (5, 0, 1677721701);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, binaryData BLOB);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId) VALUES
  (10, NULL, 75, NULL, 1677721701, NULL, 7, 3),                                    -- domain 3 = My"Domain
  (100, 5000, 59, 'step "1" \ ' || char(7), 1677721701, NULL, NULL, 0),             -- push/pop
  (200, 900, 59, CAST(X'C0AF' AS TEXT), 1677721701, NULL, NULL, 0),                  -- nested, bad UTF-8
  (300, 800, 59, NULL, 1677721701, NULL, 8, 3),                                      -- registered, domain 3
  (5050, NULL, 59, 'open', 1677721701, NULL, NULL, 0),                                -- never popped
  (1000, 3000, 60, 'a', 1677721701, NULL, NULL, 0),                                  -- start/end
  (2000, 4000, 60, 'b', 1677721701, 1677721702, NULL, 0),                            -- overlaps a, ends on 102
  (-100, 50, 59, 'early', 1677721702, NULL, NULL, 0);                                -- before time 0
