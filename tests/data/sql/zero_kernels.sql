-- An export whose kernel table exists but is empty (the run never reached the GPU).
INSERT INTO PROCESSES VALUES (16777216 * 100, 100, 'python');
